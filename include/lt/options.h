// TensorOptions: dtype + device (+ requires_grad) for factories; implicit from a Device or Dtype.
#pragma once
#include <optional>

#include "lt/device.h"
#include "lt/dtype.h"

namespace lt {

// Tensors are dense and strided: the one layout libtorch programs ask for.
enum class Layout : uint8_t { Strided = 0 };
inline constexpr Layout kStrided = Layout::Strided;

class TensorOptions {
 public:
  TensorOptions() = default;
  TensorOptions(Device d) : device_(d) {}
  TensorOptions(DeviceType d) : device_(Device(d)) {}
  TensorOptions(Dtype t) : dtype_(t) {}
  TensorOptions(const char* dev) : device_(Device(dev)) {}

  TensorOptions dtype(Dtype t) const {
    TensorOptions o = *this;
    o.dtype_ = t;
    return o;
  }
  TensorOptions device(Device d) const {
    TensorOptions o = *this;
    o.device_ = d;
    return o;
  }
  TensorOptions requires_grad(bool r) const {
    TensorOptions o = *this;
    o.requires_grad_ = r;
    return o;
  }
  template <typename T>
  TensorOptions dtype() const {
    return dtype(DtypeOf<T>::value);
  }
  TensorOptions layout(Layout) const { return *this; }  // strided, the only layout
  Dtype dtype() const { return dtype_.value_or(get_default_dtype()); }
  Dtype dtype_or(Dtype fallback) const { return dtype_.value_or(fallback); }
  bool has_dtype() const { return dtype_.has_value(); }
  Device device() const { return device_.value_or(Device(DeviceType::CPU, 0)); }
  bool has_device() const { return device_.has_value(); }
  bool requires_grad() const { return requires_grad_; }

 private:
  std::optional<Dtype> dtype_;
  std::optional<Device> device_;
  bool requires_grad_ = false;
};

// libtorch's option builders: lt::dtype(kInt64).device("lazy").requires_grad(true), ...
inline TensorOptions dtype(Dtype t) { return TensorOptions().dtype(t); }
template <typename T>
TensorOptions dtype() {
  return TensorOptions().dtype(DtypeOf<T>::value);
}
inline TensorOptions device(Device d) { return TensorOptions().device(d); }
inline TensorOptions requires_grad(bool r = true) { return TensorOptions().requires_grad(r); }

}  // namespace lt
