// torch::save / torch::load as libtorch spells them, for modules (holders, shared_ptrs or module
// objects), optimizers, tensors and vectors of tensors. The file format is safetensors (see
// lt/serialize.h), not libtorch's TorchScript archive: files move between lt programs and
// Python's safetensors, not to torch.load.
//   torch::save(model, "model.pt");   torch::load(model, "model.pt");
//   torch::save(optimizer, "opt.pt"); torch::load(optimizer, "opt.pt");
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "lt/error.h"
#include "lt/nn/module.h"
#include "lt/optim/optim.h"
#include "lt/serialize.h"
#include "lt/tensor.h"

namespace lt {

// Modules: the state dict (parameters and buffers by dotted name). load() checks every name,
// shape and dtype before changing anything.
inline void save(const nn::Module& m, const std::string& path) { m.save(path); }
inline void load(nn::Module& m, const std::string& path) { m.load(path); }
template <typename M>
void save(const nn::ModuleHolder<M>& m, const std::string& path) {
  m->save(path);
}
template <typename M>
void load(nn::ModuleHolder<M>& m, const std::string& path) {
  m->load(path);
}
template <typename M, typename = std::enable_if_t<std::is_base_of_v<nn::Module, M>>>
void save(const std::shared_ptr<M>& m, const std::string& path) {
  m->save(path);
}
template <typename M, typename = std::enable_if_t<std::is_base_of_v<nn::Module, M>>>
void load(std::shared_ptr<M>& m, const std::string& path) {
  m->load(path);
}

// Optimizers: each group's learning rate and the per-parameter state (Optimizer::state_dict).
inline void save(const optim::Optimizer& o, const std::string& path) {
  save_safetensors(path, o.state_dict(), {{"lt.kind", "optimizer"}});
}
inline void load(optim::Optimizer& o, const std::string& path) {
  o.load_state_dict(load_safetensors(path));
}

// Tensors: loaded as cpu tensors (move them with .to(device)), as libtorch loads them.
inline void save(const Tensor& t, const std::string& path) {
  save_safetensors(path, {{"tensor", t}}, {{"lt.kind", "tensor"}});
}
inline void load(Tensor& t, const std::string& path) {
  NamedTensors all = load_safetensors(path);
  if (all.size() != 1 || all[0].first != "tensor")
    throw Error("load: " + path + " does not hold one tensor (saved by save(tensor, path))");
  t = all[0].second;
}
inline void save(const std::vector<Tensor>& ts, const std::string& path) {
  NamedTensors named;
  for (size_t i = 0; i < ts.size(); ++i) named.emplace_back(std::to_string(i), ts[i]);
  save_safetensors(path, named, {{"lt.kind", "tensors"}});
}
inline void load(std::vector<Tensor>& ts, const std::string& path) {
  NamedTensors all = load_safetensors(path);
  std::vector<Tensor> out(all.size());
  for (auto& [name, t] : all) {
    size_t i = 0;
    try {
      i = std::stoul(name);
    } catch (const std::exception&) {
      throw Error("load: " + path + " does not hold a list of tensors ('" + name + "')");
    }
    if (i >= out.size()) throw Error("load: " + path + ": entry '" + name + "' out of order");
    out[i] = t;
  }
  ts = std::move(out);
}

}  // namespace lt
