// lt::data: IDX reading (synthetic .gz files written here), Fashion-MNIST lookup, and the
// DataLoader's batching and seeded shuffles.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <numeric>
#include <set>
#include <string>
#include <vector>

#include "lt/data.h"
#include "lt/lt.h"

namespace fs = std::filesystem;
using lt::data::Batch;
using lt::data::DataLoader;
using lt::data::Dataset;

namespace {

using Bytes = std::vector<unsigned char>;

// A fresh directory per test, so parallel ctest processes never share files.
std::string test_dir() {
  const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
  fs::path d = fs::path(::testing::TempDir()) /
               (std::string("lt_data_") + info->test_suite_name() + "_" + info->name());
  fs::remove_all(d);
  fs::create_directories(d);
  return d.string();
}

void put_be32(Bytes& b, uint32_t v) {
  for (int s = 24; s >= 0; s -= 8) b.push_back(static_cast<unsigned char>(v >> s));
}

Bytes idx_images(uint32_t n, uint32_t rows, uint32_t cols, const Bytes& pixels,
                 uint32_t magic = 0x00000803) {
  Bytes b;
  put_be32(b, magic);
  put_be32(b, n);
  put_be32(b, rows);
  put_be32(b, cols);
  b.insert(b.end(), pixels.begin(), pixels.end());
  return b;
}

Bytes idx_labels(uint32_t n, const Bytes& labels, uint32_t magic = 0x00000801) {
  Bytes b;
  put_be32(b, magic);
  put_be32(b, n);
  b.insert(b.end(), labels.begin(), labels.end());
  return b;
}

uint32_t crc32(const Bytes& data) {
  uint32_t c = 0xFFFFFFFFu;
  for (unsigned char b : data) {
    c ^= b;
    for (int k = 0; k < 8; ++k) c = (c >> 1) ^ (0xEDB88320u & (0u - (c & 1u)));
  }
  return ~c;
}

void put_le32(Bytes& b, uint32_t v) {
  for (int s = 0; s < 32; s += 8) b.push_back(static_cast<unsigned char>(v >> s));
}

// A gzip file (RFC 1952) whose deflate stream uses stored blocks. The tests do not link zlib (the
// library links it privately), and stored blocks still make zlib parse real gzip framing, CRC
// and length checks included.
Bytes gzip(const Bytes& data) {
  Bytes g = {0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0xff};
  size_t pos = 0;
  do {
    const size_t n = std::min<size_t>(data.size() - pos, 65535);
    const bool last = pos + n == data.size();
    g.push_back(last ? 1 : 0);  // BFINAL, BTYPE 00 (stored)
    g.push_back(static_cast<unsigned char>(n));
    g.push_back(static_cast<unsigned char>(n >> 8));
    g.push_back(static_cast<unsigned char>(~n));
    g.push_back(static_cast<unsigned char>(~n >> 8));
    g.insert(g.end(), data.begin() + static_cast<std::ptrdiff_t>(pos),
             data.begin() + static_cast<std::ptrdiff_t>(pos + n));
    pos += n;
  } while (pos < data.size());
  put_le32(g, crc32(data));
  put_le32(g, static_cast<uint32_t>(data.size()));
  return g;
}

void write_raw(const std::string& path, const Bytes& data) {
  std::ofstream out(path, std::ios::binary);
  out.write(reinterpret_cast<const char*>(data.data()), static_cast<std::streamsize>(data.size()));
}

void write_gz(const std::string& path, const Bytes& data) { write_raw(path, gzip(data)); }

Bytes read_raw(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return Bytes(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// Pixels 0, 7, 14, ... wrapping at 256, so 0 and 255-ish values both appear.
Bytes ramp(size_t n) {
  Bytes b(n);
  for (size_t i = 0; i < n; ++i) b[i] = static_cast<unsigned char>((i * 7) % 256);
  b[n - 1] = 255;
  return b;
}

// Runs f, which must throw lt::Error whose message contains every one of `parts`.
template <typename F>
void expect_error(F&& f, const std::vector<std::string>& parts) {
  try {
    f();
    ADD_FAILURE() << "expected lt::Error";
  } catch (const lt::Error& e) {
    const std::string msg = e.what();
    for (const std::string& p : parts)
      EXPECT_NE(msg.find(p), std::string::npos) << "message lacks \"" << p << "\": " << msg;
  }
}

// N images of shape [1, 2, 3] whose values all equal 10 * i + j for pixel j, labels i.
Dataset indexed_dataset(int64_t n) {
  std::vector<float> px;
  std::vector<int64_t> labels;
  for (int64_t i = 0; i < n; ++i) {
    for (int j = 0; j < 6; ++j) px.push_back(static_cast<float>(10 * i + j));
    labels.push_back(i);
  }
  return Dataset{lt::tensor(px, {n, 1, 2, 3}), lt::tensor(labels, {n})};
}

// Checks each batch row is the image of its label (the gather copied whole, matching rows) and
// returns the labels in batch order.
std::vector<int64_t> epoch_labels(DataLoader& loader) {
  std::vector<int64_t> seen;
  for (const Batch& b : loader) {
    const auto data = b.data.to_vector<float>();
    const auto target = b.target.to_vector<int64_t>();
    for (size_t k = 0; k < target.size(); ++k) {
      for (int j = 0; j < 6; ++j)
        EXPECT_EQ(data[k * 6 + j], static_cast<float>(10 * target[k] + j));
      seen.push_back(target[k]);
    }
  }
  return seen;
}

}  // namespace

// ---- read_idx

TEST(ReadIdx, ReadsValuesShapesAndLabels) {
  const std::string d = test_dir();
  const Bytes px = ramp(3 * 2 * 4);
  write_gz(d + "/img.gz", idx_images(3, 2, 4, px));
  write_gz(d + "/lab.gz", idx_labels(3, {7, 0, 9}));

  Dataset ds = lt::data::read_idx(d + "/img.gz", d + "/lab.gz");
  EXPECT_EQ(ds.size(), 3);
  EXPECT_EQ(ds.images.sizes().vec(), (std::vector<int64_t>{3, 1, 2, 4}));
  EXPECT_EQ(ds.images.dtype(), lt::kFloat32);
  EXPECT_TRUE(ds.images.device().is_cpu());
  EXPECT_EQ(ds.labels.sizes().vec(), (std::vector<int64_t>{3}));
  EXPECT_EQ(ds.labels.dtype(), lt::kInt64);
  EXPECT_EQ(ds.labels.to_vector<int64_t>(), (std::vector<int64_t>{7, 0, 9}));
  const auto v = ds.images.to_vector<float>();
  for (size_t i = 0; i < px.size(); ++i) EXPECT_EQ(v[i], static_cast<float>(px[i]) / 255.0f);
  EXPECT_EQ(*std::max_element(v.begin(), v.end()), 1.0f);

  Dataset raw = lt::data::read_idx(d + "/img.gz", d + "/lab.gz", /*scale=*/false);
  const auto r = raw.images.to_vector<float>();
  for (size_t i = 0; i < px.size(); ++i) EXPECT_EQ(r[i], static_cast<float>(px[i]));
}

TEST(ReadIdx, ReadsUncompressedFilesToo) {
  // zlib passes non-gzip input through, so already-extracted IDX files work as well.
  const std::string d = test_dir();
  write_raw(d + "/img", idx_images(2, 1, 2, {1, 2, 3, 4}));
  write_raw(d + "/lab", idx_labels(2, {5, 6}));
  Dataset ds = lt::data::read_idx(d + "/img", d + "/lab", false);
  EXPECT_EQ(ds.images.to_vector<float>(), (std::vector<float>{1, 2, 3, 4}));
  EXPECT_EQ(ds.labels.to_vector<int64_t>(), (std::vector<int64_t>{5, 6}));
}

TEST(ReadIdx, TruncatedBodyThrows) {
  const std::string d = test_dir();
  write_gz(d + "/img.gz", idx_images(3, 2, 2, ramp(2 * 2 * 2)));  // header says 3 images
  write_gz(d + "/lab.gz", idx_labels(3, {1, 2, 3}));
  expect_error([&] { lt::data::read_idx(d + "/img.gz", d + "/lab.gz"); },
               {d + "/img.gz", "truncated", "3x2x2"});

  write_gz(d + "/img_ok.gz", idx_images(3, 2, 2, ramp(3 * 2 * 2)));
  write_gz(d + "/lab_short.gz", idx_labels(3, {1, 2}));
  expect_error([&] { lt::data::read_idx(d + "/img_ok.gz", d + "/lab_short.gz"); },
               {d + "/lab_short.gz", "truncated"});

  write_gz(d + "/header_only.gz", Bytes{0, 0, 8, 3, 0, 0});
  expect_error([&] { lt::data::read_idx(d + "/header_only.gz", d + "/lab.gz"); },
               {d + "/header_only.gz", "truncated header"});
}

TEST(ReadIdx, TruncatedGzipStreamThrows) {
  const std::string d = test_dir();
  write_gz(d + "/img.gz", idx_images(50, 8, 8, ramp(50 * 8 * 8)));
  write_gz(d + "/lab.gz", idx_labels(50, ramp(50)));
  Bytes gz = read_raw(d + "/img.gz");
  ASSERT_GT(gz.size(), 40u);
  gz.resize(gz.size() / 2);  // cut the compressed file itself, mid-stream
  write_raw(d + "/cut.gz", gz);
  expect_error([&] { lt::data::read_idx(d + "/cut.gz", d + "/lab.gz"); },
               {d + "/cut.gz", "truncated"});

  // A flipped byte inside the data fails gzip's CRC check at the end of the stream.
  Bytes flipped = read_raw(d + "/img.gz");
  flipped[flipped.size() / 2] ^= 0x40;
  write_raw(d + "/flipped.gz", flipped);
  expect_error([&] { lt::data::read_idx(d + "/flipped.gz", d + "/lab.gz"); },
               {d + "/flipped.gz", "damaged"});
}

TEST(ReadIdx, TrailingDataThrows) {
  const std::string d = test_dir();
  write_gz(d + "/img.gz", idx_images(2, 2, 2, ramp(3 * 2 * 2)));  // a third image too many
  write_gz(d + "/lab.gz", idx_labels(2, {1, 2}));
  expect_error([&] { lt::data::read_idx(d + "/img.gz", d + "/lab.gz"); }, {d + "/img.gz", "past"});
}

TEST(ReadIdx, WrongMagicThrows) {
  const std::string d = test_dir();
  write_gz(d + "/img.gz", idx_images(2, 2, 2, ramp(8)));
  write_gz(d + "/lab.gz", idx_labels(2, {1, 2}));

  write_gz(d + "/bad.gz", idx_images(2, 2, 2, ramp(8), 0x12345678));
  expect_error([&] { lt::data::read_idx(d + "/bad.gz", d + "/lab.gz"); },
               {d + "/bad.gz", "magic", "0x12345678", "0x00000803"});

  write_gz(d + "/float.gz", idx_images(2, 2, 2, ramp(8), 0x00000D03));  // float elements
  expect_error([&] { lt::data::read_idx(d + "/float.gz", d + "/lab.gz"); },
               {d + "/float.gz", "not supported"});

  write_gz(d + "/dims.gz", idx_images(2, 2, 2, ramp(8), 0x00000802));
  expect_error([&] { lt::data::read_idx(d + "/dims.gz", d + "/lab.gz"); },
               {d + "/dims.gz", "2 dims, expected 3"});

  expect_error([&] { lt::data::read_idx(d + "/lab.gz", d + "/img.gz"); },
               {d + "/lab.gz", "swapped"});

  write_raw(d + "/text.gz", Bytes{'h', 'e', 'l', 'l', 'o', ' ', 'w', 'o', 'r', 'l', 'd', '!'});
  expect_error([&] { lt::data::read_idx(d + "/text.gz", d + "/lab.gz"); },
               {d + "/text.gz", "magic"});

  Bytes broken_gzip = {0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 3, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff};
  write_raw(d + "/broken.gz", broken_gzip);
  expect_error([&] { lt::data::read_idx(d + "/broken.gz", d + "/lab.gz"); }, {d + "/broken.gz"});

  write_gz(d + "/zero.gz", idx_images(2, 0, 2, {}));
  expect_error([&] { lt::data::read_idx(d + "/zero.gz", d + "/lab.gz"); },
               {d + "/zero.gz", "positive"});
}

TEST(ReadIdx, CountMismatchThrows) {
  const std::string d = test_dir();
  write_gz(d + "/img.gz", idx_images(3, 2, 2, ramp(12)));
  write_gz(d + "/lab.gz", idx_labels(2, {1, 2}));
  expect_error([&] { lt::data::read_idx(d + "/img.gz", d + "/lab.gz"); },
               {d + "/img.gz", d + "/lab.gz", "3 images", "2 labels"});
}

TEST(ReadIdx, MissingFileThrows) {
  const std::string d = test_dir();
  write_gz(d + "/lab.gz", idx_labels(1, {1}));
  expect_error([&] { lt::data::read_idx(d + "/nope.gz", d + "/lab.gz"); },
               {d + "/nope.gz", "no such file"});
  write_gz(d + "/img.gz", idx_images(1, 1, 1, {1}));
  expect_error([&] { lt::data::read_idx(d + "/img.gz", d + "/nope.gz"); },
               {d + "/nope.gz", "no such file"});
}

// ---- fashion_mnist

TEST(FashionMnist, MissingDirectoryNamesTheDebianPackage) {
  const std::string d = test_dir() + "/not_there";
  expect_error([&] { lt::data::fashion_mnist("train", d); },
               {d, "train-images-idx3-ubyte.gz", "dataset-fashion-mnist",
                "apt-get install dataset-fashion-mnist", "another directory"});
  expect_error([&] { lt::data::fashion_mnist("test", d); }, {"t10k-images-idx3-ubyte.gz"});
}

TEST(FashionMnist, BadSplitThrows) {
  expect_error([&] { lt::data::fashion_mnist("validation", "/tmp"); }, {"\"validation\"", "train"});
}

TEST(FashionMnist, ReadsADirectoryAndHonoursTheEnvironment) {
  const std::string d = test_dir();
  write_gz(d + "/train-images-idx3-ubyte.gz", idx_images(4, 28, 28, ramp(4 * 28 * 28)));
  write_gz(d + "/train-labels-idx1-ubyte.gz", idx_labels(4, {0, 9, 3, 3}));
  Dataset ds = lt::data::fashion_mnist("train", d);
  EXPECT_EQ(ds.images.sizes().vec(), (std::vector<int64_t>{4, 1, 28, 28}));
  EXPECT_EQ(ds.labels.to_vector<int64_t>(), (std::vector<int64_t>{0, 9, 3, 3}));

  const char* old = std::getenv("LT_FASHION_MNIST_DIR");
  const std::string saved = old ? old : "";
  ::setenv("LT_FASHION_MNIST_DIR", d.c_str(), 1);
  EXPECT_EQ(lt::data::default_fashion_mnist_dir(), d);
  EXPECT_EQ(lt::data::fashion_mnist("train").size(), 4);
  // Only the train files exist there: the message must name the env-chosen path.
  expect_error([&] { lt::data::fashion_mnist("test"); }, {d + "/t10k-images-idx3-ubyte.gz"});
  if (old) {
    ::setenv("LT_FASHION_MNIST_DIR", saved.c_str(), 1);
  } else {
    ::unsetenv("LT_FASHION_MNIST_DIR");
    EXPECT_EQ(lt::data::default_fashion_mnist_dir(), "/usr/share/datasets/fashion-mnist");
  }
}

TEST(FashionMnist, RealDataFromTheDebianPackage) {
  const std::string dir = "/usr/share/datasets/fashion-mnist";
  if (!fs::exists(dir + "/train-images-idx3-ubyte.gz"))
    GTEST_SKIP() << dir << " not installed (apt-get install dataset-fashion-mnist)";
  Dataset train = lt::data::fashion_mnist("train", dir);
  EXPECT_EQ(train.images.sizes().vec(), (std::vector<int64_t>{60000, 1, 28, 28}));
  EXPECT_EQ(train.labels.sizes().vec(), (std::vector<int64_t>{60000}));
  const auto labels = train.labels.to_vector<int64_t>();
  EXPECT_EQ(*std::min_element(labels.begin(), labels.end()), 0);
  EXPECT_EQ(*std::max_element(labels.begin(), labels.end()), 9);
  std::vector<int64_t> per_class(10);
  for (int64_t l : labels) ++per_class[static_cast<size_t>(l)];
  for (int64_t c : per_class) EXPECT_EQ(c, 6000);  // Fashion-MNIST is balanced
  EXPECT_GE(train.images.amin().item<float>(), 0.0f);
  EXPECT_EQ(train.images.amax().item<float>(), 1.0f);
  // The published normalisation constants of Fashion-MNIST's train split: a wrong offset or byte
  // order in decoding would not reproduce them.
  EXPECT_NEAR(train.images.mean().item<double>(), 0.2860, 1e-4);
  EXPECT_NEAR(train.images.std().item<double>(), 0.3530, 1e-4);

  Dataset test = lt::data::fashion_mnist("test", dir);
  EXPECT_EQ(test.images.sizes().vec(), (std::vector<int64_t>{10000, 1, 28, 28}));
  EXPECT_EQ(test.size(), 10000);

  DataLoader loader(test, 64, /*shuffle=*/true, /*seed=*/1);
  EXPECT_EQ(loader.size(), 157);  // 156 full batches and one of 16
  Batch b = loader.batch(0);
  EXPECT_EQ(b.data.sizes().vec(), (std::vector<int64_t>{64, 1, 28, 28}));
  EXPECT_EQ(loader.batch(156).data.size(0), 16);
}

// ---- DataLoader

TEST(DataLoader, BatchSizesWithAndWithoutDropLast) {
  Dataset ds = indexed_dataset(10);
  DataLoader keep(ds, 3, /*shuffle=*/false);
  EXPECT_EQ(keep.size(), 4);
  std::vector<int64_t> sizes;
  for (const Batch& b : keep) {
    EXPECT_EQ(b.data.dim(), 4);
    EXPECT_EQ(b.data.size(1), 1);
    EXPECT_EQ(b.data.size(2), 2);
    EXPECT_EQ(b.data.size(3), 3);
    EXPECT_EQ(b.data.dtype(), lt::kFloat32);
    EXPECT_EQ(b.target.dtype(), lt::kInt64);
    EXPECT_TRUE(b.data.device().is_cpu());
    EXPECT_EQ(b.target.size(0), b.data.size(0));
    sizes.push_back(b.data.size(0));
  }
  EXPECT_EQ(sizes, (std::vector<int64_t>{3, 3, 3, 1}));
  EXPECT_EQ(keep.batch(3).target.to_vector<int64_t>(), (std::vector<int64_t>{9}));

  DataLoader drop(ds, 3, /*shuffle=*/false, 0, /*drop_last=*/true);
  EXPECT_EQ(drop.size(), 3);
  int64_t count = 0;
  for (const Batch& b : drop) {
    EXPECT_EQ(b.data.size(0), 3);
    ++count;
  }
  EXPECT_EQ(count, 3);

  DataLoader whole(ds, 10);
  EXPECT_EQ(whole.size(), 1);
  EXPECT_EQ(DataLoader(ds, 5, false, 0, true).size(), 2);  // exact division drops nothing
}

TEST(DataLoader, UnshuffledOrderIsSequential) {
  Dataset ds = indexed_dataset(7);
  DataLoader loader(ds, 2, /*shuffle=*/false);
  std::vector<int64_t> want(7);
  std::iota(want.begin(), want.end(), 0);
  EXPECT_EQ(epoch_labels(loader), want);
  EXPECT_EQ(epoch_labels(loader), want);
}

TEST(DataLoader, EverySampleOncePerEpoch) {
  Dataset ds = indexed_dataset(23);
  DataLoader loader(ds, 4, /*shuffle=*/true, /*seed=*/42);
  std::vector<int64_t> want(23);
  std::iota(want.begin(), want.end(), 0);
  for (int epoch = 0; epoch < 4; ++epoch) {
    std::vector<int64_t> seen = epoch_labels(loader);  // also checks rows match labels
    EXPECT_NE(seen, want) << "epoch " << epoch << " was not shuffled";
    std::sort(seen.begin(), seen.end());
    EXPECT_EQ(seen, want) << "epoch " << epoch;
  }

  // drop_last: every sample at most once, and exactly size() * batch_size of them.
  DataLoader drop(ds, 4, true, 42, /*drop_last=*/true);
  std::vector<int64_t> seen = epoch_labels(drop);
  EXPECT_EQ(seen.size(), 20u);
  EXPECT_EQ(std::set<int64_t>(seen.begin(), seen.end()).size(), 20u);
}

TEST(DataLoader, ShuffleIsDeterministicPerSeedAndEpoch) {
  Dataset ds = indexed_dataset(50);
  DataLoader a(ds, 8, true, /*seed=*/7);
  DataLoader b(ds, 8, true, /*seed=*/7);
  DataLoader c(ds, 8, true, /*seed=*/8);

  const auto a0 = epoch_labels(a);
  const auto a1 = epoch_labels(a);  // each begin() starts the next epoch
  EXPECT_EQ(a.epoch(), 1);
  EXPECT_NE(a0, a1);
  EXPECT_EQ(epoch_labels(b), a0);
  EXPECT_EQ(epoch_labels(b), a1);
  EXPECT_NE(epoch_labels(c), a0);

  // set_epoch replays an epoch, and iteration goes on from it.
  a.set_epoch(0);
  EXPECT_EQ(a.epoch(), 0);
  EXPECT_EQ(epoch_labels(a), a0);
  EXPECT_EQ(epoch_labels(a), a1);

  // batch(i) reads the current epoch without advancing it.
  a.set_epoch(1);
  std::vector<int64_t> by_index;
  for (int64_t i = 0; i < a.size(); ++i)
    for (int64_t l : a.batch(i).target.to_vector<int64_t>()) by_index.push_back(l);
  EXPECT_EQ(by_index, a1);
  EXPECT_EQ(a.epoch(), 1);

  // The epoch's order is the seed + epoch stream, so (seed 7, epoch 1) == (seed 8, epoch 0).
  c.set_epoch(0);
  EXPECT_EQ(c.order(), [&] {
    a.set_epoch(1);
    return a.order();
  }());
}

TEST(DataLoader, IteratorAndRandomAccessAgree) {
  Dataset ds = indexed_dataset(9);
  DataLoader loader(ds, 4, true, 3);
  auto it = loader.begin();
  const Batch first = *it;
  EXPECT_EQ(it->target.to_vector<int64_t>(), first.target.to_vector<int64_t>());
  EXPECT_TRUE(it->data.is_same(first.data));  // dereferencing twice gathers once
  EXPECT_EQ(loader.batch(0).target.to_vector<int64_t>(), first.target.to_vector<int64_t>());
  int64_t n = 0;
  for (; it != loader.end(); ++it) ++n;
  EXPECT_EQ(n, 3);
}

TEST(DataLoader, BatchesAreIndependentCopies) {
  Dataset ds = indexed_dataset(4);
  DataLoader loader(ds, 2, false);
  Batch b = loader.batch(0);
  b.data.fill_(-1.0f);
  EXPECT_EQ(ds.images.to_vector<float>()[0], 0.0f);
  EXPECT_EQ(loader.batch(0).data.to_vector<float>()[0], 0.0f);
}

// Batches of rows of 4 KB split over the threads (runs of at least 8 rows): shuffled or not, with a
// last batch of 22 rows split unevenly, every row is the image of its label and the batches are
// those of one thread.
TEST(DataLoader, BatchesSplitOverThreadsHoldTheirRows) {
  const int64_t n = 150, w = 1024;
  std::vector<float> px;
  std::vector<int64_t> labels;
  for (int64_t i = 0; i < n; ++i) {
    for (int64_t j = 0; j < w; ++j) px.push_back(static_cast<float>(w * i + j));
    labels.push_back(i);
  }
  Dataset ds{lt::tensor(px, {n, w}), lt::tensor(labels, {n})};
  for (bool shuffle : {false, true}) {
    DataLoader loader(ds, 64, shuffle, /*seed=*/3);
    std::vector<int64_t> seen;
    std::vector<std::vector<float>> images;
    for (const Batch& b : loader) {
      const auto data = b.data.to_vector<float>();
      const auto target = b.target.to_vector<int64_t>();
      ASSERT_EQ(data.size(), target.size() * static_cast<size_t>(w));
      for (size_t k = 0; k < target.size(); ++k) {
        for (int64_t j = 0; j < w; j += 97)
          EXPECT_EQ(data[k * w + static_cast<size_t>(j)], static_cast<float>(w * target[k] + j))
              << "shuffle " << shuffle << ", row " << k << " of its batch";
        seen.push_back(target[k]);
      }
      images.push_back(data);
    }
    std::vector<int64_t> sorted = seen;
    std::sort(sorted.begin(), sorted.end());
    std::vector<int64_t> want(n);
    std::iota(want.begin(), want.end(), 0);
    EXPECT_EQ(sorted, want) << "shuffle " << shuffle;
    if (!shuffle) EXPECT_EQ(seen, want);

    // One thread gathers the same batches.
    const int before = lt::get_num_threads();
    lt::set_num_threads(1);
    size_t i = 0;
    loader.set_epoch(0);
    for (const Batch& b : loader) EXPECT_EQ(b.data.to_vector<float>(), images[i++]);
    lt::set_num_threads(before);
  }
}

// On the lazy device each batch's gathered buffers become device tensors without another copy,
// holding the same rows, in the same order, as the cpu loader's.
TEST(DataLoader, BatchesOnTheLazyDeviceMatchTheCpuOnes) {
  Dataset ds = indexed_dataset(10);
  for (bool shuffle : {true, false}) {
    DataLoader cpu(ds, 4, shuffle, 7), lazy(ds, 4, shuffle, 7);
    lazy.set_device(lt::Device("lazy"));
    EXPECT_TRUE(lazy.device().is_lazy());
    EXPECT_TRUE(cpu.device().is_cpu());
    const int64_t adopted = lt::metrics::counter("TransferAdopted");
    auto c = cpu.begin();
    int64_t n = 0;
    for (const Batch& b : lazy) {
      ASSERT_TRUE(c != cpu.end());
      EXPECT_TRUE(b.data.device().is_lazy());
      EXPECT_TRUE(b.target.device().is_lazy());
      EXPECT_TRUE(b.data.to(lt::Device("lazy")).is_same(b.data));  // already there
      EXPECT_EQ(b.data.sizes(), c->data.sizes());
      EXPECT_EQ(b.data.to_vector<float>(), c->data.to_vector<float>());
      EXPECT_EQ(b.target.to_vector<int64_t>(), c->target.to_vector<int64_t>());
      ++c;
      ++n;
    }
    EXPECT_EQ(n, 3);  // 4 + 4 + a last batch of 2
    EXPECT_EQ(lt::metrics::counter("TransferAdopted") - adopted, 2 * n) << "shuffle " << shuffle;
  }
}

TEST(DataLoader, AcceptsNonContiguousAndInt32Inputs) {
  // Images stored transposed and int32 labels are made dense/int64 once, at construction.
  auto base = lt::arange(0, 24, 1, lt::kFloat32).reshape({3, 2, 4});  // [C, N, F] with N = 2
  Dataset ds{base.permute({1, 0, 2}), lt::tensor(std::vector<int32_t>{5, 6})};
  DataLoader loader(ds, 1, false);
  Batch b = loader.batch(1);
  EXPECT_EQ(b.data.sizes().vec(), (std::vector<int64_t>{1, 3, 4}));
  EXPECT_EQ(b.data.to_vector<float>(), ds.images.select(0, 1).contiguous().to_vector<float>());
  EXPECT_EQ(b.target.dtype(), lt::kInt64);
  EXPECT_EQ(b.target.to_vector<int64_t>(), (std::vector<int64_t>{6}));
}

TEST(DataLoader, BadArgumentsThrow) {
  Dataset ds = indexed_dataset(5);
  expect_error([&] { DataLoader(ds, 0); }, {"batch_size", "[1, 5]", "0"});
  expect_error([&] { DataLoader(ds, 6); }, {"batch_size", "[1, 5]", "6"});
  expect_error([&] { DataLoader(ds, -3); }, {"batch_size"});
  DataLoader loader(ds, 2);
  expect_error([&] { loader.batch(3); }, {"index 3", "[0, 3)"});
  expect_error([&] { loader.batch(-1); }, {"index -1"});
  expect_error([&] { loader.set_epoch(-1); }, {"epoch"});
  Dataset mismatched{ds.images, lt::tensor(std::vector<int64_t>{1, 2})};
  expect_error([&] { DataLoader(mismatched, 1); }, {"5 images", "2 labels"});
  expect_error([&] { DataLoader(Dataset{}, 1); }, {"defined"});
}
