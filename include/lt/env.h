// The environment variables lazytensor reads, each with its type, default and meaning.
#pragma once
#include <optional>
#include <string>

namespace lt {

// The table (Markdown), as `lt-train --help-env` prints it.
std::string environment_help();
// A variable of the table as set (nullopt when unset: defaults do not count). Throws lt::Error for a name not in the table.
std::optional<std::string> environment(const char* name);

}  // namespace lt
