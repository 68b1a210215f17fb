// The out-of-line parts of torch::data: TensorDataset, the MNIST reader, the samplers, and the
// tensor helpers of Normalize and Stack.
#include <filesystem>
#include <limits>
#include <numeric>

#include "core/check.h"
#include "core/shape.h"
#include "data/shuffle.h"
#include "lt/data.h"
#include "lt/ops.h"

namespace lt::data {
namespace {

std::optional<std::vector<size_t>> take(const std::vector<size_t>* order, size_t size,
                                        size_t& index, size_t n) {
  if (index >= size) return std::nullopt;
  const size_t end = std::min(size, index + n);
  std::vector<size_t> r;
  r.reserve(end - index);
  for (size_t i = index; i < end; ++i) r.push_back(order ? (*order)[i] : i);
  index = end;
  return r;
}

// root/name or root/name.gz, whichever exists (the plain file first, as MNIST ships it).
std::string idx_file(const std::string& root, const std::string& name) {
  const std::filesystem::path plain = std::filesystem::path(root) / name;
  std::error_code ec;
  if (std::filesystem::exists(plain, ec)) return plain.string();
  const std::string gz = plain.string() + ".gz";
  LT_CHECK(std::filesystem::exists(gz, ec), "MNIST: neither ", plain.string(), " nor ", gz,
           " exists");
  return gz;
}

}  // namespace

namespace datasets {

TensorDataset::TensorDataset(Tensor t) : tensor(std::move(t)) {
  LT_CHECK(tensor.defined() && tensor.dim() >= 1,
           "TensorDataset: expected a tensor with a dim 0 to index, got ",
           tensor.defined() ? shape_str(tensor.sizes()) : std::string("an undefined tensor"));
}
TensorDataset::TensorDataset(const std::vector<Tensor>& tensors)
    : TensorDataset(lt::stack(tensors)) {}
TensorExample TensorDataset::get(size_t index) {
  LT_CHECK(index < static_cast<size_t>(tensor.size(0)), "TensorDataset: index ", index,
           " out of range for ", tensor.size(0), " examples");
  return TensorExample(tensor.select(0, static_cast<int64_t>(index)));
}
std::optional<size_t> TensorDataset::size() const { return static_cast<size_t>(tensor.size(0)); }

MNIST::MNIST(const std::string& root, Mode mode) : train_(mode == Mode::kTrain) {
  const std::string prefix = train_ ? "train" : "t10k";
  const std::string images = idx_file(root, prefix + "-images-idx3-ubyte");
  const std::string labels = idx_file(root, prefix + "-labels-idx1-ubyte");
  data::Dataset d = read_idx(images, labels, true);
  images_ = d.images;
  targets_ = d.labels.to(kInt64);
}
Example<> MNIST::get(size_t index) {
  LT_CHECK(index < static_cast<size_t>(images_.size(0)), "MNIST: index ", index,
           " out of range for ", images_.size(0), " examples");
  const auto i = static_cast<int64_t>(index);
  return {images_.select(0, i), targets_.select(0, i)};
}
std::optional<size_t> MNIST::size() const { return static_cast<size_t>(images_.size(0)); }

}  // namespace datasets

namespace transforms::detail {

Tensor channel_tensor(ArrayRef<double> v) {
  LT_CHECK(!v.empty(), "Normalize: expected at least one mean and one stddev value");
  return lt::tensor(std::vector<float>(v.begin(), v.end()), {static_cast<int64_t>(v.size()), 1, 1});
}

Tensor stack_rows(const std::vector<Tensor>& rows) {
  LT_CHECK(!rows.empty(), "Stack: cannot collate an empty batch");
  return lt::stack(rows);
}

}  // namespace transforms::detail

namespace samplers {

void SequentialSampler::reset(std::optional<size_t> new_size) {
  if (new_size) size_ = *new_size;
  index_ = 0;
}
std::optional<std::vector<size_t>> SequentialSampler::next(size_t n) {
  return take(nullptr, size_, index_, n);
}

RandomSampler::RandomSampler(int64_t size) {
  LT_CHECK(size >= 0, "RandomSampler: size must be non-negative, got ", size);
  order_.resize(static_cast<size_t>(size));
  reset();
}
void RandomSampler::reset(std::optional<size_t> new_size) {
  if (new_size) order_.resize(*new_size);
  std::iota(order_.begin(), order_.end(), size_t{0});
  // The permutation's seed comes from lt's generator, so manual_seed() fixes every epoch.
  const auto seed = static_cast<uint64_t>(
      lt::randint(0, std::numeric_limits<int64_t>::max(), {1}).item<int64_t>());
  seeded_shuffle(order_, seed);
  index_ = 0;
}
std::optional<std::vector<size_t>> RandomSampler::next(size_t n) {
  return take(&order_, order_.size(), index_, n);
}

DistributedSampler::DistributedSampler(size_t size, size_t num_replicas, size_t rank, bool shuffle,
                                       uint64_t seed)
    : size_(size), replicas_(num_replicas), rank_(rank), shuffle_(shuffle), seed_(seed) {
  LT_CHECK(num_replicas >= 1 && rank < num_replicas, "DistributedSampler: rank ", rank,
           " must be below num_replicas ", num_replicas);
  reset();
}
void DistributedSampler::reset(std::optional<size_t> new_size) {
  if (new_size) size_ = *new_size;
  std::vector<size_t> all(size_);
  std::iota(all.begin(), all.end(), size_t{0});
  if (shuffle_) seeded_shuffle(all, seed_ + epoch_);
  const size_t per = (size_ + replicas_ - 1) / replicas_;
  mine_.clear();
  for (size_t i = 0; i < per && size_ > 0; ++i)
    mine_.push_back(all[(rank_ + i * replicas_) % size_]);
  index_ = 0;
}
std::optional<std::vector<size_t>> DistributedSampler::next(size_t n) {
  return take(&mine_, mine_.size(), index_, n);
}

}  // namespace samplers
}  // namespace lt::data
