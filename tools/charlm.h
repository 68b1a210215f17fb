// lt-train --model charlm: a character language model (embedding, learned positions, a causal
// TransformerDecoder, a linear head) trained on the text files of Debian's `fortunes` package.
#pragma once
#include <lt/lt.h>

#include <cstdint>
#include <string>
#include <vector>

namespace charlm {

// The text: every regular file of `dir` except the strfile indexes (*.dat) and the *.u8 links,
// in name order, as bytes; the vocabulary is the bytes that occur.
struct Corpus {
  std::vector<int64_t> tokens;       // ids into `vocab`
  std::vector<unsigned char> vocab;  // id -> byte, ascending
  int64_t files = 0;
  double unigram_nats = 0;  // the entropy of the byte frequencies: a unigram model's loss
};
Corpus read_corpus(const std::string& dir);

// tokens [B, T] -> logits [B, T, vocab]. The decoder's self-attention and its attention to the
// memory (the token and position embeddings) are both causal, so position t sees only 0..t.
class CharLmImpl : public lt::nn::Module {
 public:
  CharLmImpl(int64_t vocab, int64_t seq_len, int64_t d_model, int64_t nhead, int64_t layers);
  lt::Tensor forward(const lt::Tensor& tokens);
  lt::nn::Embedding embed{nullptr};
  lt::nn::TransformerDecoder decoder{nullptr};
  lt::nn::Linear head{nullptr};
  lt::Tensor pos, mask;
};
LT_MODULE(CharLm);

struct Config {
  std::string device = "lazy", data_dir = "/usr/share/games/fortunes", optim = "adam";
  int64_t epochs = 1, batch_size = 32, seq_len = 64, seed = 0, max_steps = -1;
  int64_t d_model = 64, nhead = 4, layers = 2;
  double lr = 3e-3;
  bool quiet = false;
};

// Trains and reports; the per-step training losses go to `losses`. Returns the exit status.
int train(const Config& c, std::vector<double>* losses);

}  // namespace charlm
