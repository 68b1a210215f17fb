// Device: where a tensor lives. "cpu" runs ops eagerly; "lazy" records them into an IR graph.
#pragma once
#include <cstdint>
#include <string>

namespace lt {

enum class DeviceType : uint8_t { CPU = 0, Lazy = 1 };

class Device {
 public:
  Device(DeviceType type = DeviceType::CPU, int index = 0) : type_(type), index_(index) {}
  Device(const std::string& spec);  // "cpu", "lazy", "lazy:0"
  Device(const char* spec) : Device(std::string(spec)) {}

  DeviceType type() const { return type_; }
  int index() const { return index_; }
  bool is_cpu() const { return type_ == DeviceType::CPU; }
  bool is_lazy() const { return type_ == DeviceType::Lazy; }
  std::string str() const;

  bool operator==(const Device& o) const { return type_ == o.type_ && index_ == o.index_; }
  bool operator!=(const Device& o) const { return !(*this == o); }

 private:
  DeviceType type_;
  int index_;
};

// The device types, as c10 spells them; each converts to its Device (index 0).
inline constexpr DeviceType kCPU = DeviceType::CPU;
inline constexpr DeviceType kLazy = DeviceType::Lazy;

}  // namespace lt
