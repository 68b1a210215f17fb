// Saving and loading named tensors in the safetensors format (https://github.com/huggingface/
// safetensors): an 8-byte little-endian header length N, N bytes of JSON describing each tensor
// ({"name": {"dtype": "F32", "shape": [2, 3], "data_offsets": [begin, end]}, ...}, plus an
// optional "__metadata__" object of strings), padded with spaces to a multiple of 8, then the raw
// little-endian data. Files written here load in Python's safetensors and the other way round,
// for the dtypes lt has: F32, F64, I32, I64, BOOL.
#pragma once
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "lt/tensor.h"

namespace lt {

using NamedTensors = std::vector<std::pair<std::string, Tensor>>;

// Writes `tensors` (any device, any strides; they are copied to dense host memory) to `path`.
// Names must be unique and not "__metadata__". The file is written next to `path` and renamed
// over it at the end, so a failed save leaves an existing file intact.
void save_safetensors(const std::string& path, const NamedTensors& tensors,
                      const std::map<std::string, std::string>& metadata = {});

// Reads every tensor of a safetensors file into cpu tensors, in the header's order. The header is
// validated before any data is read: sizes, JSON, dtypes, shapes, offsets inside the data and
// not overlapping, and each tensor's byte count equal to its dtype size times its element count.
// Every problem throws lt::Error naming the file (and the tensor, where there is one).
NamedTensors load_safetensors(const std::string& path);

// The header's "__metadata__" strings (empty when it has none).
std::map<std::string, std::string> load_safetensors_metadata(const std::string& path);

}  // namespace lt
