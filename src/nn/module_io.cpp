// Module::save/load: the state dict as a safetensors file.
#include "lt/nn/module.h"
#include "lt/serialize.h"

namespace lt::nn {

void Module::save(const std::string& path) const { save_safetensors(path, state_dict()); }

void Module::load(const std::string& path) { load_state_dict(load_safetensors(path)); }

}  // namespace lt::nn
