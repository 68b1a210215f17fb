// The one place that reads the process environment. Every variable the library and lt-train
// read is a row of the table in config.cpp with its type, default and one line of help; a
// value that does not parse as its type is an lt::Error naming the variable, never a silent
// default. Values are read at each call (tests and lt-train's ranks set them at run time);
// callers on hot paths keep the value in a static, as before.
#pragma once
#include <cstdint>
#include <optional>
#include <string>

namespace lt::config {

// The raw value: nullopt when unset (set-but-empty is "" where the row allows it).
std::optional<std::string> text(const char* name);
// An integer or real row: its default when unset or empty; an error when malformed or out of
// the row's range.
int64_t integer(const char* name);
double real(const char* name);
// A flag row: 1/true/on/yes or 0/false/off/no; its default when unset or empty.
bool flag(const char* name);
// A choice row: one of the row's values, or its default when unset or empty.
std::string choice(const char* name);

// Whether the variable is set at all (a table row; its default does not count).
bool is_set(const char* name);
// For values read while the library loads (static initialization, where an exception would
// terminate the process): a malformed value prints the error and exits with status 2.
int64_t integer_at_load(const char* name);
bool flag_at_load(const char* name);

// The table as lt-train --help-env prints it (and README.md shows it).
std::string help_table();

}  // namespace lt::config
