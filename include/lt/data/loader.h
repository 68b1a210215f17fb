// torch::data's samplers and data loader as libtorch spells them:
//   auto loader = torch::data::make_data_loader<torch::data::samplers::SequentialSampler>(
//       std::move(dataset), torch::data::DataLoaderOptions().batch_size(64));
//   for (auto& batch : *loader) { ... batch.data ... batch.target ... }
// Batches are produced in the calling thread, in the sampler's order (workers and max_jobs are
// accepted and ignored: see README.md, "libtorch programs").
#pragma once
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <memory>
#include <optional>
#include <type_traits>
#include <utility>
#include <vector>

#include "lt/arg.h"
#include "lt/error.h"

namespace lt::data {

namespace samplers {

// Yields batches of indices: reset() starts an epoch, next(n) returns up to n indices or nullopt
// when the epoch is over.
template <typename BatchRequest = std::vector<size_t>>
class Sampler {
 public:
  using BatchRequestType = BatchRequest;
  virtual ~Sampler() = default;
  virtual void reset(std::optional<size_t> new_size = std::nullopt) = 0;
  virtual std::optional<BatchRequest> next(size_t batch_size) = 0;
};

// 0, 1, ..., size - 1.
class SequentialSampler : public Sampler<> {
 public:
  explicit SequentialSampler(size_t size) : size_(size) {}
  void reset(std::optional<size_t> new_size = std::nullopt) override;
  std::optional<std::vector<size_t>> next(size_t batch_size) override;
  size_t index() const noexcept { return index_; }

 private:
  size_t size_, index_ = 0;
};

// A new permutation each epoch, drawn from lt's generator (so manual_seed makes it reproducible).
class RandomSampler : public Sampler<> {
 public:
  explicit RandomSampler(int64_t size);
  void reset(std::optional<size_t> new_size = std::nullopt) override;
  std::optional<std::vector<size_t>> next(size_t batch_size) override;
  size_t index() const noexcept { return index_; }

 private:
  std::vector<size_t> order_;
  size_t index_ = 0;
};

// The share of rank `rank` among `num_replicas` processes: a permutation (seeded by seed + epoch,
// the same on every rank; set_epoch() before each epoch) or the sequence, padded by wrapping so
// that every rank gets ceil(size / num_replicas) indices.
class DistributedSampler : public Sampler<> {
 public:
  DistributedSampler(size_t size, size_t num_replicas, size_t rank, bool shuffle,
                     uint64_t seed = 0);
  void set_epoch(size_t epoch) { epoch_ = epoch; }
  size_t epoch() const noexcept { return epoch_; }
  void reset(std::optional<size_t> new_size = std::nullopt) override;
  std::optional<std::vector<size_t>> next(size_t batch_size) override;

 private:
  size_t size_, replicas_, rank_;
  bool shuffle_;
  uint64_t seed_;
  size_t epoch_ = 0, index_ = 0;
  std::vector<size_t> mine_;
};

class DistributedRandomSampler : public DistributedSampler {
 public:
  DistributedRandomSampler(size_t size, size_t num_replicas = 1, size_t rank = 0)
      : DistributedSampler(size, num_replicas, rank, true) {}
};
class DistributedSequentialSampler : public DistributedSampler {
 public:
  DistributedSequentialSampler(size_t size, size_t num_replicas = 1, size_t rank = 0)
      : DistributedSampler(size, num_replicas, rank, false) {}
};

}  // namespace samplers

struct DataLoaderOptions {
  DataLoaderOptions() = default;
  DataLoaderOptions(size_t batch_size) : batch_size_(batch_size) {}
  LT_ARG(size_t, batch_size) = 1;
  LT_ARG(size_t, workers) = 0;
  LT_ARG(std::optional<size_t>, max_jobs);
  LT_ARG(std::optional<std::chrono::milliseconds>, timeout);
  LT_ARG(bool, enforce_ordering) = true;
  // Without it the last batch of an epoch may be smaller than batch_size.
  LT_ARG(bool, drop_last) = false;
};

// Iterates a dataset's batches in the order its sampler gives, one epoch per begin().
template <typename Dataset, typename Sampler>
class StatelessDataLoader {
 public:
  using BatchType = typename Dataset::BatchType;
  using BatchRequestType = typename Sampler::BatchRequestType;

  StatelessDataLoader(Dataset dataset, Sampler sampler, DataLoaderOptions options)
      : dataset_(std::move(dataset)), sampler_(std::move(sampler)), options_(std::move(options)) {
    if (options_.batch_size() == 0) throw Error("DataLoader: batch_size must be positive");
  }

  class Iterator {
   public:
    using iterator_category = std::input_iterator_tag;
    using value_type = BatchType;
    using difference_type = std::ptrdiff_t;
    using pointer = BatchType*;
    using reference = BatchType&;

    Iterator() = default;
    BatchType& operator*() { return *batch_; }
    BatchType* operator->() { return &*batch_; }
    Iterator& operator++() {
      fetch();
      return *this;
    }
    bool operator==(const Iterator& o) const { return !batch_ && !o.batch_; }
    bool operator!=(const Iterator& o) const { return !(*this == o); }

   private:
    friend class StatelessDataLoader;
    explicit Iterator(StatelessDataLoader* loader) : loader_(loader) { fetch(); }
    void fetch() { batch_ = loader_ ? loader_->next_batch() : std::nullopt; }
    StatelessDataLoader* loader_ = nullptr;
    std::optional<BatchType> batch_;
  };

  // Starts a new epoch (the sampler is reset).
  Iterator begin() {
    sampler_.reset();
    return Iterator(this);
  }
  Iterator end() { return Iterator(); }
  const DataLoaderOptions& options() const noexcept { return options_; }
  Sampler& sampler() noexcept { return sampler_; }
  const Dataset& dataset() const noexcept { return dataset_; }

 private:
  std::optional<BatchType> next_batch() {
    std::optional<BatchRequestType> request = sampler_.next(options_.batch_size());
    if (!request || request->empty()) return std::nullopt;
    if (options_.drop_last() && request->size() < options_.batch_size()) return std::nullopt;
    return dataset_.get_batch(std::move(*request));
  }

  Dataset dataset_;
  Sampler sampler_;
  DataLoaderOptions options_;
};

template <typename Dataset, typename Sampler,
          typename = std::enable_if_t<
              std::is_base_of_v<samplers::Sampler<typename Sampler::BatchRequestType>, Sampler>>>
std::unique_ptr<StatelessDataLoader<Dataset, Sampler>> make_data_loader(
    Dataset dataset, Sampler sampler, DataLoaderOptions options = DataLoaderOptions()) {
  return std::make_unique<StatelessDataLoader<Dataset, Sampler>>(
      std::move(dataset), std::move(sampler), std::move(options));
}

// The sampler is built from the dataset's size (RandomSampler unless another is named).
template <typename Sampler = samplers::RandomSampler, typename Dataset,
          typename = std::enable_if_t<std::is_constructible_v<Sampler, size_t>>>
std::unique_ptr<StatelessDataLoader<Dataset, Sampler>> make_data_loader(
    Dataset dataset, DataLoaderOptions options = DataLoaderOptions()) {
  const std::optional<size_t> size = dataset.size();
  if (!size) throw Error("make_data_loader: the dataset has no size; pass a sampler");
  Sampler sampler(*size);
  return make_data_loader(std::move(dataset), std::move(sampler), std::move(options));
}

}  // namespace lt::data
