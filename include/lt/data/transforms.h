// torch::data::transforms as libtorch spells them: BatchTransform and Transform bases, Lambda,
// TensorTransform/TensorLambda (on an example's data), Normalize, and the Stack collation that
// turns a vector of examples into one batched example.
#pragma once
#include <functional>
#include <utility>
#include <vector>

#include "lt/array_ref.h"
#include "lt/data/datasets.h"
#include "lt/tensor.h"

namespace lt::data::transforms {

template <typename InputBatch, typename OutputBatch>
class BatchTransform {
 public:
  using InputBatchType = InputBatch;
  using OutputBatchType = OutputBatch;
  virtual ~BatchTransform() = default;
  virtual OutputBatch apply_batch(InputBatch input_batch) = 0;
};

// Applied to each example of a batch.
template <typename Input, typename Output>
class Transform : public BatchTransform<std::vector<Input>, std::vector<Output>> {
 public:
  using InputType = Input;
  using OutputType = Output;
  virtual Output apply(Input input) = 0;
  std::vector<Output> apply_batch(std::vector<Input> input_batch) override {
    std::vector<Output> out;
    out.reserve(input_batch.size());
    for (auto& in : input_batch) out.push_back(apply(std::move(in)));
    return out;
  }
};

template <typename Input, typename Output = Input>
class Lambda : public Transform<Input, Output> {
 public:
  using FunctionType = std::function<Output(Input)>;
  explicit Lambda(FunctionType f) : f_(std::move(f)) {}
  Output apply(Input input) override { return f_(std::move(input)); }

 private:
  FunctionType f_;
};

template <typename Input, typename Output = Input>
class BatchLambda : public BatchTransform<Input, Output> {
 public:
  using FunctionType = std::function<Output(Input)>;
  explicit BatchLambda(FunctionType f) : f_(std::move(f)) {}
  Output apply_batch(Input input) override { return f_(std::move(input)); }

 private:
  FunctionType f_;
};

// A transform of an example's data tensor (the target passes through).
template <typename Target = Tensor>
class TensorTransform : public Transform<Example<Tensor, Target>, Example<Tensor, Target>> {
 public:
  using E = Example<Tensor, Target>;
  virtual Tensor operator()(Tensor input) = 0;
  E apply(E input) override {
    input.data = (*this)(std::move(input.data));
    return input;
  }
};

template <typename Target = Tensor>
class TensorLambda : public TensorTransform<Target> {
 public:
  using FunctionType = std::function<Tensor(Tensor)>;
  explicit TensorLambda(FunctionType f) : f_(std::move(f)) {}
  Tensor operator()(Tensor input) override { return f_(std::move(input)); }

 private:
  FunctionType f_;
};

// (data - mean) / stddev per channel: one value each for all channels, or one per channel of
// [C, ...] data.
template <typename Target = Tensor>
struct Normalize : public TensorTransform<Target> {
  Normalize(ArrayRef<double> mean, ArrayRef<double> stddev)
      : mean(channel_values(mean)), stddev(channel_values(stddev)) {}
  Tensor operator()(Tensor input) override { return input.sub(mean).div(stddev); }
  Tensor mean, stddev;

 private:
  static Tensor channel_values(ArrayRef<double> v);
};

namespace detail {
Tensor channel_tensor(ArrayRef<double> v);
Tensor stack_rows(const std::vector<Tensor>& rows);
}  // namespace detail

template <typename Target>
Tensor Normalize<Target>::channel_values(ArrayRef<double> v) {
  return detail::channel_tensor(v);
}

template <typename BatchType, typename T = std::vector<BatchType>>
using Collation = BatchTransform<T, BatchType>;

// Collates examples into one: data and targets each stacked along a new dim 0.
template <typename E = Example<>>
struct Stack;

template <>
struct Stack<Example<>> : public Collation<Example<>> {
  Example<> apply_batch(std::vector<Example<>> examples) override {
    std::vector<Tensor> data, targets;
    data.reserve(examples.size());
    targets.reserve(examples.size());
    for (auto& e : examples) {
      data.push_back(std::move(e.data));
      targets.push_back(std::move(e.target));
    }
    return {detail::stack_rows(data), detail::stack_rows(targets)};
  }
};

template <>
struct Stack<TensorExample> : public Collation<TensorExample> {
  TensorExample apply_batch(std::vector<TensorExample> examples) override {
    std::vector<Tensor> data;
    data.reserve(examples.size());
    for (auto& e : examples) data.push_back(std::move(e.data));
    return TensorExample(detail::stack_rows(data));
  }
};

}  // namespace lt::data::transforms
