// lt::OrderedDict: a vector of (key, value) items in insertion order with lookup by key, as
// libtorch's torch::OrderedDict (what Module::named_parameters() and friends return). Items are
// std::pairs with key()/value() accessors, so both `item.key()` and `auto& [k, v] : dict` work.
#pragma once
#include <cstddef>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "lt/error.h"

namespace lt {

template <typename Key, typename Value>
class OrderedDict {
 public:
  class Item : public std::pair<Key, Value> {
   public:
    Item(Key k, Value v) : std::pair<Key, Value>(std::move(k), std::move(v)) {}
    const Key& key() const noexcept { return this->first; }
    Value& value() noexcept { return this->second; }
    const Value& value() const noexcept { return this->second; }
    Value& operator*() noexcept { return this->second; }
    const Value& operator*() const noexcept { return this->second; }
    Value* operator->() noexcept { return &this->second; }
    const Value* operator->() const noexcept { return &this->second; }
    const std::pair<Key, Value>& pair() const noexcept { return *this; }
  };
  using iterator = typename std::vector<Item>::iterator;
  using const_iterator = typename std::vector<Item>::const_iterator;

  // `key_description` names what the keys are in error messages ("parameter", "module").
  explicit OrderedDict(std::string key_description = "Key")
      : key_description_(std::move(key_description)) {}
  OrderedDict(std::initializer_list<Item> items) {
    for (const Item& i : items) insert(i.key(), i.value());
  }

  // Adds a new key; an existing key is an error (use update() to overwrite).
  Value& insert(Key key, Value value) {
    if (index_.count(key))
      throw Error(key_description_ + " '" + key_str(key) + "' already defined");
    index_.emplace(key, items_.size());
    items_.emplace_back(std::move(key), std::move(value));
    return items_.back().value();
  }
  // Inserts or overwrites every item of `other`.
  void update(const OrderedDict& other) {
    for (const Item& i : other) {
      if (Value* v = find(i.key()))
        *v = i.value();
      else
        insert(i.key(), i.value());
    }
  }

  Value* find(const Key& key) noexcept {
    auto it = index_.find(key);
    return it == index_.end() ? nullptr : &items_[it->second].value();
  }
  const Value* find(const Key& key) const noexcept {
    auto it = index_.find(key);
    return it == index_.end() ? nullptr : &items_[it->second].value();
  }
  bool contains(const Key& key) const noexcept { return index_.count(key) != 0; }

  Value& operator[](const Key& key) { return at_key(key); }
  const Value& operator[](const Key& key) const {
    return const_cast<OrderedDict*>(this)->at_key(key);
  }
  Item& operator[](size_t i) { return at_index(i); }
  const Item& operator[](size_t i) const { return const_cast<OrderedDict*>(this)->at_index(i); }

  // Removes `key` and returns its value; a missing key is an error.
  Value pop(const Key& key) {
    auto it = index_.find(key);
    if (it == index_.end()) throw missing(key);
    const size_t at = it->second;
    Value v = std::move(items_[at].value());
    items_.erase(items_.begin() + static_cast<std::ptrdiff_t>(at));
    index_.erase(it);
    for (auto& [k, i] : index_)
      if (i > at) --i;
    return v;
  }
  void clear() {
    items_.clear();
    index_.clear();
  }

  std::vector<Key> keys() const {
    std::vector<Key> r;
    for (const Item& i : items_) r.push_back(i.key());
    return r;
  }
  std::vector<Value> values() const {
    std::vector<Value> r;
    for (const Item& i : items_) r.push_back(i.value());
    return r;
  }
  const std::vector<Item>& items() const noexcept { return items_; }
  std::vector<std::pair<Key, Value>> pairs() const {
    return std::vector<std::pair<Key, Value>>(items_.begin(), items_.end());
  }

  size_t size() const noexcept { return items_.size(); }
  bool is_empty() const noexcept { return items_.empty(); }
  bool empty() const noexcept { return items_.empty(); }
  Item& front() { return at_index(0); }
  Item& back() { return at_index(items_.empty() ? 0 : items_.size() - 1); }
  iterator begin() { return items_.begin(); }
  iterator end() { return items_.end(); }
  const_iterator begin() const { return items_.begin(); }
  const_iterator end() const { return items_.end(); }
  const std::string& key_description() const noexcept { return key_description_; }

 private:
  static std::string key_str(const Key& k) {
    if constexpr (std::is_convertible_v<Key, std::string>)
      return std::string(k);
    else
      return std::to_string(k);
  }
  Error missing(const Key& key) const {
    return Error(key_description_ + " '" + key_str(key) + "' is not defined");
  }
  Value& at_key(const Key& key) {
    Value* v = find(key);
    if (!v) throw missing(key);
    return *v;
  }
  Item& at_index(size_t i) {
    if (i >= items_.size())
      throw Error("OrderedDict: index " + std::to_string(i) + " out of range for " +
                  std::to_string(items_.size()) + " items");
    return items_[i];
  }

  std::vector<Item> items_;
  std::unordered_map<Key, size_t> index_;
  std::string key_description_ = "Key";
};

}  // namespace lt
