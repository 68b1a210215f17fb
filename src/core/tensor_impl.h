// TensorImpl: what a Tensor handle points at. Eager tensors hold storage + strides; lazy
// tensors hold a payload owned by the lazy runtime (an IR value or a device buffer).
#pragma once
#include <memory>

#include "core/dims.h"
#include "core/pool.h"
#include "core/storage.h"
#include "lt/device.h"
#include "lt/dtype.h"

namespace lt {

// The lazy runtime's per-tensor state; opaque to the layers below it.
struct LazyPayload {
  virtual ~LazyPayload() = default;
  virtual std::unique_ptr<LazyPayload> clone() const = 0;  // another handle on the same data
};

// Autograd's per-tensor state (requires_grad, grad, grad_fn); opaque below the autograd layer.
struct AutogradPayload {
  virtual ~AutogradPayload() = default;
};

// Counts in-place writes to a tensor and all its views, so autograd can tell that a tensor
// it saved was modified before backward.
struct VersionCounter {
  uint32_t value = 0;
};

struct TensorImpl {
  // User-provided, so make_shared's value-initialization does not zero the whole object
  // before the member initializers run (one handle per op result).
  TensorImpl() noexcept {}
  Dims sizes;
  Dims strides;  // eager only (elements, not bytes)
  int64_t offset = 0;
  int64_t numel = 0;
  Dtype dtype = kFloat32;
  Device device;
  bool wrapped_number = false;  // a host scalar made a 0-d tensor (PyTorch's promotion rule)
  std::shared_ptr<Storage> storage;
  std::unique_ptr<LazyPayload> lazy;  // owned: each view has its own payload
  std::shared_ptr<AutogradPayload> autograd;
  std::shared_ptr<VersionCounter> version;  // shared by a base and its views; made on demand

  // The counter of this tensor, created if missing (views take their base's at creation).
  const std::shared_ptr<VersionCounter>& version_counter() {
    if (!version) version = std::make_shared<VersionCounter>();
    return version;
  }
  void bump_version() {
    if (version) version->value++;
  }

  char* data() const {
    return static_cast<char*>(storage->data) + offset * static_cast<int64_t>(dtype_size(dtype));
  }
};

// A new handle, allocated from the small-object pool (one per op result: keep it cheap).
inline std::shared_ptr<TensorImpl> new_impl() {
  return std::allocate_shared<TensorImpl>(pool::Allocator<TensorImpl>());
}

}  // namespace lt
