#include "core/config.h"
#include "lt/env.h"

namespace lt {

std::string environment_help() { return config::help_table(); }
std::optional<std::string> environment(const char* name) {
  if (!config::is_set(name)) return std::nullopt;
  return config::text(name);
}

}  // namespace lt
