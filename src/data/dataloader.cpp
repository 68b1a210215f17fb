// DataLoader: seeded per-epoch shuffles and batches gathered by copying whole rows.
#include <algorithm>
#include <cstring>
#include <numeric>

#include "core/check.h"
#include "core/parallel.h"
#include "core/shape.h"
#include "data/shuffle.h"
#include "eager/tensor_util.h"
#include "lt/data.h"

namespace lt::data {

DataLoader::DataLoader(const Dataset& dataset, int64_t batch_size, bool shuffle, uint64_t seed,
                       bool drop_last)
    : batch_size_(batch_size), shuffle_(shuffle), seed_(seed), drop_last_(drop_last) {
  LT_CHECK(dataset.images.defined() && dataset.labels.defined(),
           "DataLoader: the dataset's images and labels must both be defined");
  LT_CHECK(dataset.images.dim() >= 1, "DataLoader: images must have a batch dim, got shape ",
           shape_str(dataset.images.sizes()));
  LT_CHECK(dataset.labels.dim() == 1, "DataLoader: labels must be 1-d [N], got shape ",
           shape_str(dataset.labels.sizes()));
  n_ = dataset.images.size(0);
  LT_CHECK(dataset.labels.size(0) == n_, "DataLoader: ", n_, " images but ", dataset.labels.size(0),
           " labels");
  LT_CHECK(n_ > 0, "DataLoader: the dataset is empty");
  LT_CHECK(batch_size >= 1 && batch_size <= n_, "DataLoader: batch_size must be in [1, ", n_,
           "] (the dataset size), got ", batch_size);
  // Batches are gathered with memcpy, which needs dense host rows.
  images_ = dataset.images.to(kCPU).contiguous();
  labels_ = dataset.labels.to(kCPU).to(kInt64).contiguous();
  reshuffle();
}

int64_t DataLoader::size() const {
  return drop_last_ ? n_ / batch_size_ : (n_ + batch_size_ - 1) / batch_size_;
}

void DataLoader::set_epoch(int64_t epoch) {
  LT_CHECK(epoch >= 0, "DataLoader::set_epoch: epoch must be non-negative, got ", epoch);
  epoch_ = epoch;
  next_epoch_ = epoch;
  reshuffle();
}

void DataLoader::reshuffle() {
  order_.resize(static_cast<size_t>(n_));
  std::iota(order_.begin(), order_.end(), int64_t{0});
  if (!shuffle_) return;
  seeded_shuffle(order_, seed_ + static_cast<uint64_t>(epoch_));
}

// Shuffled rows are scattered over the data set (188 MB for Fashion-MNIST as float32), so each
// comes from DRAM, and one row's copy waited for its loads before the next row's began: the
// rows kAhead further on are prefetched while a row is copied (a batch of 64: 14-21 -> 10-12 us
// on a Zen 5; distances 2 and 8 did the same).
constexpr int64_t kAhead = 4;

// The batch's rows are split over the library's threads, in contiguous runs of at least
// max(8 rows, 16 KB): each copy waits on DRAM, so two threads keep twice the loads in flight,
// and between steps the second core's OpenMP worker is spinning idle anyway. In the main job's
// loop (one process, shuffled batches of 64 rows of 3136 bytes, blocks of 47 steps alternated):
// the gather took 60 -> 42, 110 -> 82 and 126 -> 78 us a batch on a 2-core Zen 5, the step
// unchanged. The copy is the same whichever thread makes it, so batches do not depend on it.
static int64_t rows_per_thread(size_t row_bytes) {
  const size_t rows = (16384 + row_bytes - 1) / std::max<size_t>(row_bytes, 1);
  return std::max<int64_t>(8, static_cast<int64_t>(rows));
}

// The gathered batch on device_: moved, so that the lazy device adopts its fresh buffers.
static Batch on_device(Batch b, Device device) {
  if (device.is_cpu()) return b;
  return Batch{std::move(b.data).to(device), std::move(b.target).to(device)};
}

Batch DataLoader::batch(int64_t i) const {
  LT_CHECK(i >= 0 && i < size(), "DataLoader::batch: index ", i, " out of range [0, ", size(), ")");
  const int64_t start = i * batch_size_;
  const int64_t count = std::min(batch_size_, n_ - start);

  std::vector<int64_t> sizes = images_.sizes().vec();
  sizes[0] = count;
  Batch b;
  b.data = make_eager(sizes, images_.dtype());
  b.target = make_eager({count}, kInt64);

  const size_t row_bytes = static_cast<size_t>(images_.numel() / n_) * images_.element_size();
  const char* src = static_cast<const char*>(images_.raw_data_ptr());
  char* dst = static_cast<char*>(b.data.raw_data_ptr());
  const int64_t* lsrc = static_cast<const int64_t*>(labels_.raw_data_ptr());
  int64_t* ldst = static_cast<int64_t*>(b.target.raw_data_ptr());
  parallel_for(count, rows_per_thread(row_bytes), [&](int64_t k0, int64_t k1) {
    if (!shuffle_) {  // the rows are one contiguous slab
      std::memcpy(dst + static_cast<size_t>(k0) * row_bytes,
                  src + static_cast<size_t>(start + k0) * row_bytes,
                  static_cast<size_t>(k1 - k0) * row_bytes);
      std::memcpy(ldst + k0, lsrc + start + k0, static_cast<size_t>(k1 - k0) * sizeof(int64_t));
      return;
    }
    for (int64_t k = k0; k < k1; ++k) {
      const int64_t row = order_[static_cast<size_t>(start + k)];
      if (k + kAhead < k1) {
        const char* next =
            src + static_cast<size_t>(order_[static_cast<size_t>(start + k + kAhead)]) * row_bytes;
        for (size_t off = 0; off < row_bytes; off += 64) __builtin_prefetch(next + off);
      }
      std::memcpy(dst + static_cast<size_t>(k) * row_bytes,
                  src + static_cast<size_t>(row) * row_bytes, row_bytes);
      ldst[k] = lsrc[row];
    }
  });
  // No prefetch of the next batch's rows here: its ~3100 prefetches cost the main job's loop
  // more than the next gather saved (a batch of 64: 22-23 us without, 28-31 with; Zen 4).
  return on_device(std::move(b), device_);
}

DataLoader::Iterator DataLoader::begin() {
  epoch_ = next_epoch_;
  next_epoch_ = epoch_ + 1;
  reshuffle();
  return Iterator(this, 0);
}

const Batch& DataLoader::Iterator::operator*() const {
  LT_CHECK(loader_ != nullptr,
           "DataLoader::Iterator: dereferencing a default-constructed iterator");
  if (!loaded_) {
    batch_ = loader_->batch(i_);
    loaded_ = true;
  }
  return batch_;
}

}  // namespace lt::data
