// lt::IValue: a tagged value (None, bool, int, double, string, tensor, or a list of ints, doubles
// or tensors), as libtorch's c10::IValue is used by C++ programs: the values a custom autograd
// function stashes in ctx->saved_data.
#pragma once
#include <cstdint>
#include <string>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

#include "lt/error.h"
#include "lt/scalar.h"
#include "lt/tensor.h"

namespace lt {

class IValue {
 public:
  IValue() = default;
  IValue(bool v) : v_(v) {}  // NOLINT: implicit, as libtorch's
  template <typename T,
            std::enable_if_t<std::is_integral_v<T> && !std::is_same_v<T, bool>, int> = 0>
  IValue(T v) : v_(static_cast<int64_t>(v)) {}  // NOLINT
  template <typename T, std::enable_if_t<std::is_floating_point_v<T>, int> = 0>
  IValue(T v) : v_(static_cast<double>(v)) {}           // NOLINT
  IValue(const char* v) : v_(std::string(v)) {}         // NOLINT
  IValue(std::string v) : v_(std::move(v)) {}           // NOLINT
  IValue(Tensor v) : v_(std::move(v)) {}                // NOLINT
  IValue(std::vector<int64_t> v) : v_(std::move(v)) {}  // NOLINT
  IValue(std::vector<double> v) : v_(std::move(v)) {}   // NOLINT
  IValue(std::vector<Tensor> v) : v_(std::move(v)) {}   // NOLINT
  IValue(const Scalar& s) {                             // NOLINT
    if (s.is_floating())
      v_ = s.to_double();
    else if (s.dtype() == kBool)
      v_ = s.to<bool>();
    else
      v_ = s.to_int();
  }

  bool isNone() const { return v_.index() == 0; }
  bool isBool() const { return std::holds_alternative<bool>(v_); }
  bool isInt() const { return std::holds_alternative<int64_t>(v_); }
  bool isDouble() const { return std::holds_alternative<double>(v_); }
  bool isString() const { return std::holds_alternative<std::string>(v_); }
  bool isTensor() const { return std::holds_alternative<Tensor>(v_); }
  bool isIntList() const { return std::holds_alternative<std::vector<int64_t>>(v_); }
  bool isDoubleList() const { return std::holds_alternative<std::vector<double>>(v_); }
  bool isTensorList() const { return std::holds_alternative<std::vector<Tensor>>(v_); }
  bool isScalar() const { return isBool() || isInt() || isDouble(); }

  bool toBool() const { return get<bool>("Bool"); }
  int64_t toInt() const { return get<int64_t>("Int"); }
  double toDouble() const { return get<double>("Double"); }
  const std::string& toStringRef() const { return get<std::string>("String"); }
  Tensor toTensor() const { return get<Tensor>("Tensor"); }
  std::vector<int64_t> toIntVector() const { return get<std::vector<int64_t>>("IntList"); }
  std::vector<double> toDoubleVector() const { return get<std::vector<double>>("DoubleList"); }
  std::vector<Tensor> toTensorVector() const { return get<std::vector<Tensor>>("TensorList"); }
  Scalar toScalar() const {
    if (isDouble()) return toDouble();
    if (isInt()) return toInt();
    return toBool();
  }
  std::string tagKind() const {
    static const char* names[] = {"None",   "Bool",    "Int",        "Double",    "String",
                                  "Tensor", "IntList", "DoubleList", "TensorList"};
    return names[v_.index()];
  }

 private:
  template <typename T>
  const T& get(const char* want) const {
    if (const T* p = std::get_if<T>(&v_)) return *p;
    throw Error(std::string("IValue: expected ") + want + " but it holds " + tagKind());
  }
  std::variant<std::monostate, bool, int64_t, double, std::string, Tensor, std::vector<int64_t>,
               std::vector<double>, std::vector<Tensor>>
      v_;
};

}  // namespace lt
