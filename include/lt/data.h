// Datasets and batching: IDX (MNIST-format) files read with zlib, Fashion-MNIST from the Debian
// package dataset-fashion-mnist, and a DataLoader that cuts a dataset into (shuffled) batches.
#pragma once
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <string>
#include <vector>

#include "lt/data/datasets.h"
#include "lt/data/loader.h"
#include "lt/data/transforms.h"
#include "lt/tensor.h"

namespace lt::data {

// A whole dataset held in two cpu tensors: images [N, 1, rows, cols] float32 and labels [N] int64.
struct Dataset {
  Tensor images;
  Tensor labels;
  int64_t size() const { return images.defined() ? images.size(0) : 0; }
};

// Reads a pair of IDX files (gzip-compressed, or plain: zlib reads both), images with magic
// 0x00000803 (ubyte, 3 dims) and labels with magic 0x00000801 (ubyte, 1 dim). With `scale` the
// pixels are divided by 255 into [0, 1]; without it they keep their 0..255 values as floats.
// Throws lt::Error naming the file for a missing file, a bad magic number or dims, counts that
// differ between the two files, or a body shorter or longer than the header says.
Dataset read_idx(const std::string& images_gz, const std::string& labels_gz, bool scale = true);

// Fashion-MNIST's "train" (60000 images) or "test" (10000) split, 28x28 grayscale, 10 classes.
// `dir` defaults to $LT_FASHION_MNIST_DIR when set, else /usr/share/datasets/fashion-mnist,
// where Debian's package dataset-fashion-mnist installs the four .gz files.
Dataset fashion_mnist(const std::string& split, const std::string& dir = "", bool scale = true);

// The directory fashion_mnist() reads when given none.
std::string default_fashion_mnist_dir();

struct Batch {
  Tensor data;    // [B, ...] like the dataset's images (on the loader's device(): cpu by default)
  Tensor target;  // [B] int64 (the same device)
};

// Cuts a Dataset into batches along dim 0. With `shuffle`, the order of an epoch is a permutation
// drawn with std::mt19937_64 seeded by seed + epoch, so a run is reproducible from its seed.
// Each begin() starts the next epoch (0, 1, 2, ... unless set_epoch() says otherwise), so
//   for (int e = 0; e < 3; ++e) for (const Batch& b : loader) ...
// sees three different orders. batch(i) reads the order of the current epoch without advancing.
class DataLoader {
 public:
  DataLoader(const Dataset& dataset, int64_t batch_size, bool shuffle = true, uint64_t seed = 0,
             bool drop_last = false);

  // Number of batches in an epoch (a last partial batch counts unless drop_last).
  int64_t size() const;
  int64_t batch_size() const { return batch_size_; }
  int64_t dataset_size() const { return n_; }
  int64_t epoch() const { return epoch_; }

  // Makes `epoch` the current one (batch(i) then reads its order) and the one the next begin()
  // iterates; the begin() after that goes on with epoch + 1.
  void set_epoch(int64_t epoch);

  // Batches come out on `device` (cpu by default). On the lazy device the rows are gathered
  // into a buffer that becomes the device's without a second copy, so a step's b.data.to(dev)
  // costs nothing (moving a gathered cpu batch there copies it again).
  void set_device(Device device) { device_ = device; }
  Device device() const { return device_; }

  // The i-th batch of the current epoch, 0 <= i < size(): its rows copied into new tensors.
  Batch batch(int64_t i) const;

  // The sample indices of the current epoch in the order they are batched.
  const std::vector<int64_t>& order() const { return order_; }

  class Iterator {
   public:
    using iterator_category = std::input_iterator_tag;
    using value_type = Batch;
    using difference_type = std::ptrdiff_t;
    using pointer = const Batch*;
    using reference = const Batch&;

    Iterator() = default;
    reference operator*() const;
    pointer operator->() const { return &**this; }
    Iterator& operator++() {
      ++i_;
      loaded_ = false;
      return *this;
    }
    Iterator operator++(int) {
      Iterator old = *this;
      ++*this;
      return old;
    }
    bool operator==(const Iterator& o) const { return loader_ == o.loader_ && i_ == o.i_; }
    bool operator!=(const Iterator& o) const { return !(*this == o); }

   private:
    friend class DataLoader;
    Iterator(const DataLoader* loader, int64_t i) : loader_(loader), i_(i) {}

    const DataLoader* loader_ = nullptr;
    int64_t i_ = 0;
    // The batch is gathered on first dereference and kept, so *it and it-> agree without
    // copying the rows twice.
    mutable Batch batch_;
    mutable bool loaded_ = false;
  };

  // Starts the next epoch (reshuffling) and iterates its batches.
  Iterator begin();
  Iterator end() const { return Iterator(this, size()); }

 private:
  void reshuffle();

  Tensor images_;  // cpu, contiguous
  Tensor labels_;  // cpu, contiguous, int64
  int64_t n_ = 0;
  int64_t batch_size_ = 1;
  bool shuffle_ = true;
  uint64_t seed_ = 0;
  bool drop_last_ = false;
  Device device_ = kCPU;
  int64_t epoch_ = 0;
  int64_t next_epoch_ = 0;
  std::vector<int64_t> order_;
};

}  // namespace lt::data
