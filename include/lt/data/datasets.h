// torch::data's datasets as libtorch spells them: Example, the BatchDataset/Dataset bases a user
// derives from (get(index) and size()), MapDataset (dataset.map(transform)), TensorDataset and
// the MNIST reader. Examples and batches are cpu tensors; a program moves them to its device.
#pragma once
#include <cstddef>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "lt/array_ref.h"
#include "lt/tensor.h"

namespace lt::data {

namespace example {
using NoTarget = void;
}  // namespace example

// One sample: data and target (or data alone, Example<Tensor, NoTarget>).
template <typename Data = Tensor, typename Target = Tensor>
struct Example {
  using DataType = Data;
  using TargetType = Target;
  Example() = default;
  Example(Data data, Target target) : data(std::move(data)), target(std::move(target)) {}
  Data data;
  Target target;
};

template <typename Data>
struct Example<Data, example::NoTarget> {
  using DataType = Data;
  using TargetType = example::NoTarget;
  Example() = default;
  Example(Data data) : data(std::move(data)) {}
  operator Data&() { return data; }
  operator const Data&() const { return data; }
  Data data;
};
using TensorExample = Example<Tensor, example::NoTarget>;

namespace datasets {

template <typename Source, typename Transform>
class MapDataset;
template <typename Source, typename Transform>
MapDataset<Source, Transform> map(Source dataset, Transform transform);

// A dataset read a batch at a time: get_batch(request) for a request of BatchRequest (the
// sample indices, for the samplers here) and its size (nullopt: unknown).
template <typename Self, typename Batch = std::vector<Example<>>,
          typename BatchRequest = ArrayRef<size_t>>
class BatchDataset {
 public:
  using SelfType = Self;
  using BatchType = Batch;
  using BatchRequestType = BatchRequest;
  virtual ~BatchDataset() = default;
  virtual Batch get_batch(BatchRequest request) = 0;
  virtual std::optional<size_t> size() const = 0;

  // This dataset with `transform` applied to each batch it returns.
  template <typename Transform>
  MapDataset<Self, Transform> map(Transform transform) & {
    return datasets::map(static_cast<Self&>(*this), std::move(transform));
  }
  template <typename Transform>
  MapDataset<Self, Transform> map(Transform transform) && {
    return datasets::map(std::move(static_cast<Self&>(*this)), std::move(transform));
  }
};

// A dataset read an example at a time: get(index); a batch is the examples of its indices.
template <typename Self, typename SingleExample = Example<>>
class Dataset : public BatchDataset<Self, std::vector<SingleExample>> {
 public:
  using ExampleType = SingleExample;
  virtual ExampleType get(size_t index) = 0;
  std::vector<ExampleType> get_batch(ArrayRef<size_t> indices) override {
    std::vector<ExampleType> batch;
    batch.reserve(indices.size());
    for (size_t i : indices) batch.push_back(get(i));
    return batch;
  }
};

// A dataset whose batches pass through a transform (transforms.h): Normalize per example,
// Stack to collate, or any BatchTransform.
template <typename Source, typename Transform>
class MapDataset
    : public BatchDataset<MapDataset<Source, Transform>, typename Transform::OutputBatchType,
                          typename Source::BatchRequestType> {
 public:
  using DatasetType = Source;
  using TransformType = Transform;
  using BatchRequestType = typename Source::BatchRequestType;
  using OutputBatchType = typename Transform::OutputBatchType;

  MapDataset(Source dataset, Transform transform)
      : dataset_(std::move(dataset)), transform_(std::move(transform)) {}
  OutputBatchType get_batch(BatchRequestType request) override {
    return transform_.apply_batch(dataset_.get_batch(std::move(request)));
  }
  std::optional<size_t> size() const override { return dataset_.size(); }
  const Source& dataset() const noexcept { return dataset_; }
  const Transform& transform() const noexcept { return transform_; }

 private:
  Source dataset_;
  Transform transform_;
};

template <typename Source, typename Transform>
MapDataset<Source, Transform> map(Source dataset, Transform transform) {
  return MapDataset<Source, Transform>(std::move(dataset), std::move(transform));
}

// Rows of one tensor as examples without targets.
class TensorDataset : public Dataset<TensorDataset, TensorExample> {
 public:
  explicit TensorDataset(Tensor tensor);
  // The tensors stacked along a new dim 0.
  explicit TensorDataset(const std::vector<Tensor>& tensors);
  TensorExample get(size_t index) override;
  std::optional<size_t> size() const override;
  Tensor tensor;
};

// An MNIST-format directory: train-images-idx3-ubyte, train-labels-idx1-ubyte, t10k-images-
// idx3-ubyte and t10k-labels-idx1-ubyte, each plain or gzipped (.gz), as MNIST and Fashion-MNIST
// ship them. Images are [N, 1, 28, 28] float32 in [0, 1], targets [N] int64, as libtorch's.
class MNIST : public Dataset<MNIST> {
 public:
  enum class Mode { kTrain, kTest };
  explicit MNIST(const std::string& root, Mode mode = Mode::kTrain);
  Example<> get(size_t index) override;
  std::optional<size_t> size() const override;
  bool is_train() const noexcept { return train_; }
  const Tensor& images() const { return images_; }
  const Tensor& targets() const { return targets_; }

 private:
  Tensor images_, targets_;
  bool train_;
};

}  // namespace datasets
}  // namespace lt::data
