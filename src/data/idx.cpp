// IDX files (the MNIST format) read through zlib, and Fashion-MNIST on top of them.
#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <limits>
#include <string>
#include <system_error>
#include <vector>

#include "core/check.h"
#include "core/config.h"
#include "eager/tensor_util.h"
#include "lt/data.h"

namespace lt::data {
namespace {

constexpr uint32_t kImagesMagic = 0x00000803;  // ubyte elements, 3 dims
constexpr uint32_t kLabelsMagic = 0x00000801;  // ubyte elements, 1 dim
constexpr const char* kDefaultFashionMnistDir = "/usr/share/datasets/fashion-mnist";

std::string hex32(uint32_t v) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "0x%08X", v);
  return buf;
}

// A gzip (or plain: gzread passes those through) file, closed on every path out.
class GzFile {
 public:
  explicit GzFile(const std::string& path) : path_(path) {
    std::error_code ec;
    LT_CHECK(std::filesystem::exists(path, ec), "read_idx: ", path, ": no such file");
    LT_CHECK(!std::filesystem::is_directory(path, ec), "read_idx: ", path,
             ": is a directory, not an IDX file");
    errno = 0;
    f_ = gzopen(path.c_str(), "rb");
    LT_CHECK(f_ != nullptr, "read_idx: ", path, ": cannot open (",
             errno ? std::strerror(errno) : "out of memory", ")");
    gzbuffer(f_, 1 << 17);
  }
  ~GzFile() {
    if (f_) gzclose(f_);
  }
  GzFile(const GzFile&) = delete;
  GzFile& operator=(const GzFile&) = delete;

  // Reads up to n bytes; fewer only at the end of the data. A damaged or cut-off gzip stream
  // throws rather than looking like a short file, so the message says what really happened.
  size_t read(void* out, size_t n) {
    size_t done = 0;
    auto* p = static_cast<unsigned char*>(out);
    while (done < n) {
      const unsigned chunk = static_cast<unsigned>(std::min<size_t>(n - done, 1u << 30));
      const int got = gzread(f_, p + done, chunk);
      if (got < 0) fail();
      if (got == 0) break;
      done += static_cast<size_t>(got);
    }
    if (done < n) check_clean_end();
    return done;
  }

  const std::string& path() const { return path_; }

 private:
  [[noreturn]] void fail() {
    int err = Z_OK;
    const char* msg = gzerror(f_, &err);
    if (err == Z_BUF_ERROR)
      throw_error("read_idx: ", path_, ": the gzip stream ends early (truncated .gz file)");
    throw_error("read_idx: ", path_, ": cannot decompress (", msg ? msg : "zlib error",
                "); the file is damaged or not gzip");
  }
  void check_clean_end() {
    int err = Z_OK;
    gzerror(f_, &err);
    // Z_BUF_ERROR at the end of input means the file stopped in the middle of a gzip stream.
    if (err != Z_OK) fail();
  }

  std::string path_;
  gzFile f_ = nullptr;
};

uint32_t read_be32(GzFile& f, const char* what) {
  unsigned char b[4];
  const size_t got = f.read(b, 4);
  LT_CHECK(got == 4, "read_idx: ", f.path(), ": truncated header (the file ends inside the ", what,
           "; is this an IDX file?)");
  return (uint32_t{b[0]} << 24) | (uint32_t{b[1]} << 16) | (uint32_t{b[2]} << 8) | uint32_t{b[3]};
}

void check_magic(const GzFile& f, uint32_t got, uint32_t want, const char* kind) {
  if (got == want) return;
  const char* other =
      want == kImagesMagic ? "a labels file (0x00000801)" : "an images file (0x00000803)";
  const uint32_t other_magic = want == kImagesMagic ? kLabelsMagic : kImagesMagic;
  LT_CHECK(got != other_magic, "read_idx: ", f.path(), ": expected an IDX ", kind, " file (magic ",
           hex32(want), ") but this is ", other, "; are the two paths swapped?");
  LT_CHECK((got >> 16) == 0, "read_idx: ", f.path(), ": bad magic number ", hex32(got),
           " (expected ", hex32(want), "); not an IDX file, or not decompressed correctly");
  LT_CHECK(((got >> 8) & 0xFF) == 0x08, "read_idx: ", f.path(), ": element type 0x", std::hex,
           ((got >> 8) & 0xFF), std::dec, " is not supported, only unsigned bytes (0x08)",
           " (magic ", hex32(got), ", expected ", hex32(want), ")");
  throw_error("read_idx: ", f.path(), ": the ", kind, " file has ", (got & 0xFF),
              " dims, expected ", (want & 0xFF), " (magic ", hex32(got), ", expected ", hex32(want),
              ")");
}

// Reads exactly `n` body bytes and checks that nothing follows them: a short or long body means
// the header's dims do not describe this file.
std::vector<unsigned char> read_body(GzFile& f, size_t n, const std::string& dims) {
  std::vector<unsigned char> body;
  // Grow with the data actually present, so a corrupt header claiming terabytes cannot make us
  // allocate them up front.
  constexpr size_t kChunk = size_t{1} << 24;
  while (body.size() < n) {
    const size_t old = body.size();
    const size_t want = std::min(kChunk, n - old);
    body.resize(old + want);
    const size_t got = f.read(body.data() + old, want);
    body.resize(old + got);
    LT_CHECK(got == want, "read_idx: ", f.path(), ": truncated: the header says ", dims, " = ", n,
             " bytes of data but the file holds only ", body.size());
  }
  unsigned char extra[1];
  LT_CHECK(f.read(extra, 1) == 0, "read_idx: ", f.path(), ": has data past the ", n,
           " bytes that the header's ", dims, " describe; the header is wrong or the file damaged");
  return body;
}

}  // namespace

Dataset read_idx(const std::string& images_gz, const std::string& labels_gz, bool scale) {
  // Open both first so a missing labels file is reported before decompressing 47 MB of images.
  GzFile img(images_gz);
  GzFile lab(labels_gz);

  check_magic(img, read_be32(img, "magic number"), kImagesMagic, "images");
  const uint32_t n = read_be32(img, "dims");
  const uint32_t rows = read_be32(img, "dims");
  const uint32_t cols = read_be32(img, "dims");
  LT_CHECK(rows > 0 && cols > 0, "read_idx: ", images_gz, ": images of ", rows, "x", cols,
           " pixels; each dim must be positive");
  check_magic(lab, read_be32(lab, "magic number"), kLabelsMagic, "labels");
  const uint32_t n_labels = read_be32(lab, "dims");
  LT_CHECK(n == n_labels, "read_idx: the images file ", images_gz, " has ", n,
           " images but the labels file ", labels_gz, " has ", n_labels, " labels");

  // Three uint32 factors can overflow size_t on 32-bit hosts and int64 sizes anywhere.
  const unsigned __int128 total = static_cast<unsigned __int128>(n) * rows * cols;
  LT_CHECK(total <= static_cast<unsigned __int128>(std::numeric_limits<int64_t>::max() / 4),
           "read_idx: ", images_gz, ": ", n, "x", rows, "x", cols, " images are too large");
  const size_t pixels = static_cast<size_t>(total);
  const std::string dims =
      std::to_string(n) + "x" + std::to_string(rows) + "x" + std::to_string(cols);
  const std::vector<unsigned char> raw_images = read_body(img, pixels, dims);
  const std::vector<unsigned char> raw_labels = read_body(lab, n, std::to_string(n) + " labels");

  Dataset d;
  d.images = make_eager(
      {static_cast<int64_t>(n), 1, static_cast<int64_t>(rows), static_cast<int64_t>(cols)},
      kFloat32);
  float* px = static_cast<float*>(d.images.raw_data_ptr());
  // Divide rather than multiply by 1/255 so values match torchvision's ToTensor bit for bit.
  if (scale) {
    for (size_t i = 0; i < pixels; ++i) px[i] = static_cast<float>(raw_images[i]) / 255.0f;
  } else {
    for (size_t i = 0; i < pixels; ++i) px[i] = static_cast<float>(raw_images[i]);
  }
  d.labels = make_eager({static_cast<int64_t>(n)}, kInt64);
  int64_t* lp = static_cast<int64_t*>(d.labels.raw_data_ptr());
  for (size_t i = 0; i < n; ++i) lp[i] = raw_labels[i];
  return d;
}

std::string default_fashion_mnist_dir() {
  const std::string env = config::text("LT_FASHION_MNIST_DIR").value_or("");
  return env.empty() ? std::string(kDefaultFashionMnistDir) : env;
}

Dataset fashion_mnist(const std::string& split, const std::string& dir, bool scale) {
  LT_CHECK(split == "train" || split == "test", "fashion_mnist: split must be \"train\" or ",
           "\"test\", got \"", split, "\"");
  const std::filesystem::path root = dir.empty() ? default_fashion_mnist_dir() : dir;
  const std::string prefix = split == "train" ? "train" : "t10k";
  const std::string images = (root / (prefix + "-images-idx3-ubyte.gz")).string();
  const std::string labels = (root / (prefix + "-labels-idx1-ubyte.gz")).string();
  for (const std::string& p : {images, labels}) {
    std::error_code ec;
    LT_CHECK(std::filesystem::is_regular_file(p, ec), "fashion_mnist: ", p,
             " not found; install the Debian package dataset-fashion-mnist (apt-get install ",
             "dataset-fashion-mnist), which puts the files in ", kDefaultFashionMnistDir,
             ", or pass another directory (or set LT_FASHION_MNIST_DIR) holding ", prefix,
             "-images-idx3-ubyte.gz and ", prefix, "-labels-idx1-ubyte.gz");
  }
  return read_idx(images, labels, scale);
}

}  // namespace lt::data
