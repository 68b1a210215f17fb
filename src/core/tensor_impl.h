// TensorImpl: what a Tensor handle points at. Eager tensors hold storage + strides; lazy
// tensors hold a payload owned by the lazy runtime (an IR value or a device buffer).
#pragma once
#include <memory>

#include "core/dims.h"
#include "core/storage.h"
#include "lt/device.h"
#include "lt/dtype.h"

namespace lt {

// The lazy runtime's per-tensor state; opaque to the layers below it.
struct LazyPayload {
  virtual ~LazyPayload() = default;
};

struct TensorImpl {
  Dims sizes;
  Dims strides;  // eager only (elements, not bytes)
  int64_t offset = 0;
  int64_t numel = 0;
  Dtype dtype = kFloat32;
  Device device;
  bool wrapped_number = false;  // a host scalar made a 0-d tensor (PyTorch's promotion rule)
  std::shared_ptr<Storage> storage;
  std::unique_ptr<LazyPayload> lazy;  // owned: each view has its own payload

  char* data() const {
    return static_cast<char*>(storage->data) + offset * static_cast<int64_t>(dtype_size(dtype));
  }
};

}  // namespace lt
