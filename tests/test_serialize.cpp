// safetensors I/O: round trips, the exact bytes of a small file, and damaged files, each of which
// must throw lt::Error (never crash or read out of bounds).
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "lt/lt.h"
#include "lt/serialize.h"

namespace fs = std::filesystem;

namespace {

using Bytes = std::vector<unsigned char>;

std::string test_dir() {
  const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
  fs::path d = fs::path(::testing::TempDir()) /
               (std::string("lt_st_") + info->test_suite_name() + "_" + info->name());
  fs::remove_all(d);
  fs::create_directories(d);
  return d.string();
}

void write_raw(const std::string& path, const Bytes& data) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(data.data()), static_cast<std::streamsize>(data.size()));
}

Bytes read_raw(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return Bytes(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// A file with the given header text (padded as the format asks unless told not to) and body;
// `len` overrides the 8-byte header length.
Bytes st_file(const std::string& header, const Bytes& body, std::optional<uint64_t> len = {}) {
  std::string h = header;
  while (h.size() % 8) h += ' ';
  const uint64_t n = len.value_or(h.size());
  Bytes b;
  for (int i = 0; i < 8; ++i) b.push_back(static_cast<unsigned char>(n >> (8 * i)));
  b.insert(b.end(), h.begin(), h.end());
  b.insert(b.end(), body.begin(), body.end());
  return b;
}

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

void expect_load_error(const std::string& path, const std::vector<std::string>& parts) {
  std::vector<std::string> all = parts;
  all.push_back(path);
  expect_error([&] { lt::load_safetensors(path); }, all);
}

void expect_same(const lt::Tensor& got, const lt::Tensor& want, const std::string& name) {
  SCOPED_TRACE(name);
  EXPECT_TRUE(got.device().is_cpu());
  ASSERT_EQ(got.dtype(), want.dtype());
  ASSERT_EQ(got.sizes().vec(), want.sizes().vec());
  switch (want.dtype()) {
    case lt::kFloat32:
      EXPECT_EQ(got.to_vector<float>(), want.to_vector<float>());
      break;
    case lt::kFloat64:
      EXPECT_EQ(got.to_vector<double>(), want.to_vector<double>());
      break;
    case lt::kInt32:
      EXPECT_EQ(got.to_vector<int32_t>(), want.to_vector<int32_t>());
      break;
    case lt::kInt64:
      EXPECT_EQ(got.to_vector<int64_t>(), want.to_vector<int64_t>());
      break;
    case lt::kBool:
      EXPECT_EQ(got.to_vector<bool>(), want.to_vector<bool>());
      break;
  }
}

void expect_round_trip(const std::string& path, const lt::NamedTensors& tensors) {
  lt::save_safetensors(path, tensors);
  const lt::NamedTensors back = lt::load_safetensors(path);
  ASSERT_EQ(back.size(), tensors.size());
  for (size_t i = 0; i < tensors.size(); ++i) {
    EXPECT_EQ(back[i].first, tensors[i].first);
    expect_same(back[i].second, tensors[i].second, tensors[i].first);
  }
}

}  // namespace

TEST(Safetensors, RoundTripsEveryDtype) {
  const std::string d = test_dir();
  expect_round_trip(
      d + "/all.safetensors",
      {
          {"f32", lt::tensor(std::vector<float>{1.5f, -2.0f, 3.25f, 1e-30f, -0.0f, 7.0f}, {2, 3})},
          {"f64", lt::tensor(std::vector<double>{1.0 / 3.0, -1e300, 0.0, 42.0})},
          {"i32", lt::tensor(std::vector<int32_t>{INT32_MIN, -1, 0, INT32_MAX}, {2, 2})},
          {"i64", lt::tensor(std::vector<int64_t>{INT64_MIN, 5, INT64_MAX})},
          {"bool", lt::tensor(std::vector<bool>{true, false, false, true, true})},
          {"i8", lt::tensor(std::vector<int8_t>{-128, 0, 127})},
          {"f16", lt::tensor(std::vector<float>{0.1f, -65504.f, 6e-8f}).to(lt::kHalf)},
          {"bf16", lt::tensor(std::vector<float>{0.1f, -3e38f, 1e-38f}).to(lt::kBFloat16)},
          {"scalar", lt::scalar_tensor(3.5, lt::kFloat64)},
          {"scalar_i", lt::scalar_tensor(-7, lt::kInt32)},
          {"empty", lt::tensor(std::vector<float>{}, {0})},
          {"empty_3d", lt::tensor(std::vector<int64_t>{}, {2, 0, 3})},
          {"big", lt::arange(0, 100000, 1, lt::kFloat32).reshape({100, 1000})},
      });
}

TEST(Safetensors, RoundTripsNonContiguousAndLazyTensors) {
  const std::string d = test_dir();
  auto m = lt::arange(0, 12, 1, lt::kFloat32).reshape({3, 4});
  auto transposed = m.t();                                             // strides (1, 4)
  auto stepped = lt::arange(0, 20, 1, lt::kInt64).slice(0, 1, 20, 3);  // stride 3, offset 1
  auto broadcast = lt::tensor(std::vector<double>{1, 2}).unsqueeze(0).expand({3, 2});  // stride 0
  auto lazy = (m * 2).to(lt::Device("lazy"));
  ASSERT_FALSE(transposed.is_contiguous());
  ASSERT_FALSE(stepped.is_contiguous());
  expect_round_trip(d + "/views.safetensors",
                    {{"t", transposed}, {"s", stepped}, {"e", broadcast}, {"lazy", lazy}});
}

TEST(Safetensors, ExactBytesOfATinyFile) {
  const std::string d = test_dir();
  const std::string path = d + "/tiny.safetensors";
  lt::save_safetensors(path, {{"a", lt::tensor(std::vector<float>{1.0f, -2.5f})}});
  // The header is 54 bytes of compact JSON, padded with 2 spaces to 56 (0x38) so the data
  // starts 8-aligned; then 1.0f = 0x3F800000 and -2.5f = 0xC0200000, little-endian.
  const std::string header = R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}})";
  ASSERT_EQ(header.size(), 54u);
  Bytes want = {0x38, 0, 0, 0, 0, 0, 0, 0};
  want.insert(want.end(), header.begin(), header.end());
  want.push_back(' ');
  want.push_back(' ');
  for (unsigned char b : {0x00, 0x00, 0x80, 0x3F, 0x00, 0x00, 0x20, 0xC0}) want.push_back(b);
  EXPECT_EQ(read_raw(path), want);
}

TEST(Safetensors, HeaderFormatDetails) {
  const std::string d = test_dir();
  const std::string path = d + "/fmt.safetensors";
  // Data is laid out widest element first (so everything is naturally aligned) while the header
  // and load_safetensors keep the caller's order.
  lt::save_safetensors(path,
                       {{"flag", lt::tensor(std::vector<bool>{true})},
                        {"w", lt::tensor(std::vector<double>{2.0})},
                        {"i", lt::tensor(std::vector<int32_t>{3, 4}, {1, 2})},
                        {"s", lt::scalar_tensor(1.0f)}},
                       {{"format", "pt"}, {"note", "a \"quoted\"\nline"}});
  const Bytes raw = read_raw(path);
  uint64_t len = 0;
  for (int i = 7; i >= 0; --i) len = (len << 8) | raw[static_cast<size_t>(i)];
  EXPECT_EQ(len % 8, 0u);
  const std::string header(raw.begin() + 8, raw.begin() + 8 + static_cast<std::ptrdiff_t>(len));
  EXPECT_EQ(header.substr(0, header.find_last_not_of(' ') + 1),
            R"({"__metadata__":{"format":"pt","note":"a \"quoted\"\u000Aline"},)"
            R"("flag":{"dtype":"BOOL","shape":[1],"data_offsets":[20,21]},)"
            R"("w":{"dtype":"F64","shape":[1],"data_offsets":[0,8]},)"
            R"("i":{"dtype":"I32","shape":[1,2],"data_offsets":[8,16]},)"
            R"("s":{"dtype":"F32","shape":[],"data_offsets":[16,20]}})");
  EXPECT_EQ(raw.size(), 8 + len + 21);
  const auto back = lt::load_safetensors(path);
  ASSERT_EQ(back.size(), 4u);
  EXPECT_EQ(back[0].first, "flag");
  EXPECT_EQ(back[3].second.dim(), 0);
  EXPECT_EQ(back[3].second.item<float>(), 1.0f);
  const auto meta = lt::load_safetensors_metadata(path);
  EXPECT_EQ(meta.at("format"), "pt");
  EXPECT_EQ(meta.at("note"), "a \"quoted\"\nline");
}

TEST(Safetensors, NamesAreEscapedAndUnescaped) {
  const std::string d = test_dir();
  expect_round_trip(d + "/names.safetensors",
                    {{"layer.0.weight", lt::tensor({1.0f})},
                     {"quote\"back\\slash", lt::tensor({2.0f})},
                     {"tab\tnew\nline\x01", lt::tensor({3.0f})},
                     {"\xC3\xA9t\xC3\xA9 \xF0\x9F\x98\x80", lt::tensor({4.0f})},
                     {"", lt::tensor({5.0f})}});
}

TEST(Safetensors, ReadsHandWrittenJson) {
  // Whitespace, key order, escapes and an unknown extra field, as other writers may produce.
  const std::string d = test_dir();
  const std::string path = d + "/hand.safetensors";
  Bytes body = {1, 0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xF0, 0x3F, 0, 5};
  write_raw(path, st_file(" {\n  \"__metadata__\" : { } ,\n"
                          "  \"\\u0078\\/\\ud83d\\ude00\": {\"shape\": [ 2 ], \"extra\": [null, "
                          "true, false, -1.5e3, {}], \"data_offsets\": [0, 8], \"dtype\": \"I32\"},"
                          "\"d\":{\"data_offsets\":[8,16],\"dtype\":\"F64\",\"shape\":[]},"
                          "\"b\":{\"data_offsets\":[16,18],\"dtype\":\"BOOL\",\"shape\":[2]}\t}",
                          body));
  // The leading space is not '{', and the format requires the header to start with it.
  expect_load_error(path, {"'{'"});

  write_raw(path, st_file("{\n  \"__metadata__\" : { } ,\n"
                          "  \"\\u0078\\/\\ud83d\\ude00\": {\"shape\": [ 2 ], \"extra\": [null, "
                          "true, false, -1.5e3, {}], \"data_offsets\": [0, 8], \"dtype\": \"I32\"},"
                          "\"d\":{\"data_offsets\":[8,16],\"dtype\":\"F64\",\"shape\":[]},"
                          "\"b\":{\"data_offsets\":[16,18],\"dtype\":\"BOOL\",\"shape\":[2]}\t}",
                          body));
  const auto t = lt::load_safetensors(path);
  ASSERT_EQ(t.size(), 3u);
  EXPECT_EQ(t[0].first, "x/\xF0\x9F\x98\x80");
  EXPECT_EQ(t[0].second.to_vector<int32_t>(), (std::vector<int32_t>{1, 2}));
  EXPECT_EQ(t[1].second.item<double>(), 1.0);
  // A bool byte of 5 (not 0 or 1) reads as true rather than an invalid bool.
  EXPECT_EQ(t[2].second.to_vector<bool>(), (std::vector<bool>{false, true}));
}

TEST(Safetensors, EmptyFileListRoundTrips) {
  const std::string d = test_dir();
  const std::string path = d + "/none.safetensors";
  lt::save_safetensors(path, {});
  EXPECT_EQ(read_raw(path), st_file("{}", {}));
  EXPECT_TRUE(lt::load_safetensors(path).empty());
}

TEST(Safetensors, SaveOverwritesAndRejectsBadInput) {
  const std::string d = test_dir();
  const std::string path = d + "/x.safetensors";
  lt::save_safetensors(path, {{"a", lt::tensor({1.0f, 2.0f, 3.0f})}});
  lt::save_safetensors(path, {{"b", lt::tensor({4.0f})}});
  const auto back = lt::load_safetensors(path);
  ASSERT_EQ(back.size(), 1u);
  EXPECT_EQ(back[0].first, "b");

  expect_error(
      [&] {
        lt::save_safetensors(path, {{"a", lt::tensor({1.0f})}, {"a", lt::tensor({2.0f})}});
      },
      {"duplicate", "\"a\""});
  expect_error(
      [&] {
        lt::save_safetensors(path, {{"__metadata__", lt::tensor({1.0f})}});
      },
      {"reserved"});
  expect_error([&] { lt::save_safetensors(path, {{"u", lt::Tensor()}}); }, {"\"u\"", "undefined"});
  expect_error([&] { lt::save_safetensors(d + "/no/such/dir/x.safetensors", {}); },
               {d + "/no/such/dir/x.safetensors"});
  // Failed saves left the earlier file alone and no temporary behind.
  EXPECT_EQ(lt::load_safetensors(path)[0].first, "b");
  for (const auto& entry : fs::directory_iterator(d))
    EXPECT_EQ(entry.path().filename(), "x.safetensors");
}

// ---- damaged files

TEST(SafetensorsErrors, MissingOrTinyFile) {
  const std::string d = test_dir();
  expect_load_error(d + "/missing.safetensors", {"no such file"});
  write_raw(d + "/empty", {});
  expect_load_error(d + "/empty", {"too small"});
  write_raw(d + "/five", {1, 2, 3, 4, 5});
  expect_load_error(d + "/five", {"too small"});
  expect_load_error(d, {"not a regular file"});
}

TEST(SafetensorsErrors, BadHeaderLength) {
  const std::string d = test_dir();
  const std::string p = d + "/f";
  write_raw(p, st_file("{}", {}, 1000));
  expect_load_error(p, {"header length 1000", "runs past"});
  write_raw(p, st_file("{}", {}, uint64_t{1} << 40));
  expect_load_error(p, {"exceeds the limit"});
  write_raw(p, st_file("{}", {}, ~uint64_t{1}));  // 2^64 - 2
  expect_load_error(p, {"exceeds the limit"});
  write_raw(p, st_file("{}", {}, 0));
  expect_load_error(p, {"too small"});
  // A length shorter than the JSON cuts it off.
  write_raw(p,
            st_file(R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}})", {0, 0, 0, 0}, 20));
  expect_load_error(p, {"not valid JSON"});
}

TEST(SafetensorsErrors, TruncatedBody) {
  const std::string d = test_dir();
  const std::string p = d + "/t.safetensors";
  lt::save_safetensors(
      p, {{"first", lt::tensor({1.0f, 2.0f})}, {"weight", lt::arange(0, 64, 1, lt::kFloat64)}});
  const Bytes raw = read_raw(p);
  ASSERT_GT(raw.size(), 8u + 512 + 8);
  // Everything except the last tensor's final bytes: "weight" (placed first, as the wider
  // dtype) is intact, "first" now runs past the end.
  write_raw(p, Bytes(raw.begin(), raw.end() - 3));
  expect_load_error(p, {"tensor \"first\"", "run past", "truncated"});
  write_raw(p, Bytes(raw.begin(), raw.end() - 300));
  expect_load_error(p, {"run past"});
}

TEST(SafetensorsErrors, OffsetsOutOfRangeOrInconsistent) {
  const std::string d = test_dir();
  const std::string p = d + "/o";
  const Bytes body(8, 0);
  auto with = [&](const std::string& entry) {
    write_raw(p, st_file("{\"w\":{" + entry + "}}", body));
  };
  with(R"("dtype":"F32","shape":[4],"data_offsets":[0,16])");
  expect_load_error(p, {"tensor \"w\"", "[0, 16]", "8-byte data section"});
  with(R"("dtype":"F32","shape":[1],"data_offsets":[12,16])");
  expect_load_error(p, {"tensor \"w\"", "run past"});
  with(R"("dtype":"F32","shape":[2],"data_offsets":[0,4])");
  expect_load_error(p, {"tensor \"w\"", "span 4 bytes", "F32 [2] needs 8"});
  with(R"("dtype":"F64","shape":[2,2],"data_offsets":[0,8])");
  expect_load_error(p, {"tensor \"w\"", "needs 32"});
  with(R"("dtype":"F32","shape":[1],"data_offsets":[4,0])");
  expect_load_error(p, {"tensor \"w\"", "begin after end"});
  with(R"("dtype":"F32","shape":[1],"data_offsets":[0])");
  expect_load_error(p, {"tensor \"w\"", "[begin, end]"});
  with(R"("dtype":"F32","shape":[1],"data_offsets":[-4,0])");
  expect_load_error(p, {"tensor \"w\"", "non-negative integers"});
  with(R"("dtype":"F32","shape":[1],"data_offsets":[0,18446744073709551620])");
  expect_load_error(p, {"tensor \"w\"", "non-negative integers"});
  with(R"("dtype":"F32","shape":[4611686018427387904,4611686018427387904],"data_offsets":[0,8])");
  expect_load_error(p, {"tensor \"w\"", "too large"});
  with(R"("dtype":"F32","shape":[1.5],"data_offsets":[0,8])");
  expect_load_error(p, {"tensor \"w\"", "shape entries", "1.5"});
  with(R"("dtype":"F32","shape":["2"],"data_offsets":[0,8])");
  expect_load_error(p, {"tensor \"w\"", "shape entries", "a string"});
  with(R"("dtype":"F32","shape":2,"data_offsets":[0,8])");
  expect_load_error(p, {"tensor \"w\"", "\"shape\" must be an array"});
  with(R"("dtype":"F32","data_offsets":[0,8])");
  expect_load_error(p, {"tensor \"w\"", "missing \"shape\""});
  with(R"("shape":[2],"data_offsets":[0,8])");
  expect_load_error(p, {"tensor \"w\"", "missing \"dtype\""});
  with(R"("dtype":"F32","shape":[2])");
  expect_load_error(p, {"tensor \"w\"", "missing \"data_offsets\""});

  write_raw(p, st_file(R"({"w":[1,2]})", body));
  expect_load_error(p, {"tensor \"w\"", "an array"});

  // Two tensors claiming overlapping bytes.
  write_raw(p, st_file(R"({"a":{"dtype":"I32","shape":[2],"data_offsets":[0,8]},)"
                       R"("b":{"dtype":"I32","shape":[1],"data_offsets":[4,8]}})",
                       body));
  expect_load_error(p, {"\"a\"", "\"b\"", "overlap"});
  // Empty tensors occupy no bytes, so one sitting inside another is fine.
  write_raw(p, st_file(R"({"a":{"dtype":"I32","shape":[2],"data_offsets":[0,8]},)"
                       R"("b":{"dtype":"I32","shape":[0],"data_offsets":[4,4]}})",
                       body));
  EXPECT_EQ(lt::load_safetensors(p).size(), 2u);
}

TEST(SafetensorsErrors, UnknownOrUnsupportedDtype) {
  const std::string d = test_dir();
  const std::string p = d + "/d";
  write_raw(p, st_file(R"({"w":{"dtype":"Q7","shape":[2],"data_offsets":[0,8]}})", Bytes(8)));
  expect_load_error(p, {"tensor \"w\"", "unknown dtype \"Q7\""});
  write_raw(p, st_file(R"({"w":{"dtype":"U16","shape":[4],"data_offsets":[0,8]}})", Bytes(8)));
  expect_load_error(p, {"tensor \"w\"", "U16", "not supported"});
  write_raw(p, st_file(R"({"w":{"dtype":"f32","shape":[2],"data_offsets":[0,8]}})", Bytes(8)));
  expect_load_error(p, {"tensor \"w\"", "unknown dtype"});
  write_raw(p, st_file(R"({"w":{"dtype":4,"shape":[2],"data_offsets":[0,8]}})", Bytes(8)));
  expect_load_error(p, {"tensor \"w\"", "\"dtype\" must be a string"});
}

TEST(SafetensorsErrors, GarbageJson) {
  const std::string d = test_dir();
  const std::string p = d + "/g";
  const std::vector<std::string> bad = {
      "{",
      "{\"a\"",
      "{\"a\":",
      "{\"a\" 1}",
      "{\"a\":1,}",
      "{\"a\":[1,]}",
      "{\"a\":tru}",
      "{\"a\":nul}",
      "{\"a\":01}",
      "{\"a\":-}",
      "{\"a\":1.}",
      "{\"a\":1e}",
      "{\"a\":\"unterminated}",
      "{\"a\":\"bad \\q escape\"}",
      "{\"a\":\"\\u12G4\"}",
      "{\"a\":\"\\ud800\"}",
      "{\"a\":\"\\udc00\"}",
      "{\"a\":\"raw\ncontrol\"}",
      "{a:1}",
      "{}}",
      "{} x",
      "{\"a\":1,\"a\":2}",
      "{\"a\":" + std::string(5000, '[') + std::string(5000, ']') + "}",
      std::string("{\"a\":\"\0\"}", 8),
  };
  for (const std::string& h : bad) {
    SCOPED_TRACE(h.substr(0, 40));
    write_raw(p, st_file(h, {}));
    expect_load_error(p, {"not valid JSON"});
  }
  write_raw(p, st_file("[1,2]", {}));
  expect_load_error(p, {"'{'"});
  write_raw(p, st_file(R"({"__metadata__":{"k":1}})", {}));
  expect_load_error(p, {"__metadata__", "\"k\"", "string"});
  write_raw(p, st_file(R"({"__metadata__":[]})", {}));
  expect_load_error(p, {"__metadata__", "object"});
  // Deep but legal nesting in an ignored field is fine; the limit only stops runaway input.
  write_raw(p, st_file(R"({"__metadata__":{},"w":{"dtype":"F32","shape":[],"data_offsets":[0,4],)"
                       R"("x":[[[[[[[[{"y":[]}]]]]]]]]}})",
                       Bytes(4)));
  EXPECT_EQ(lt::load_safetensors(p).size(), 1u);
}

TEST(SafetensorsErrors, RandomCorruptionNeverCrashes) {
  // Every truncation and many random byte edits of a valid file either load or throw lt::Error;
  // anything else (another exception, a crash, a sanitizer report) fails the test.
  const std::string d = test_dir();
  const std::string good = d + "/good.safetensors";
  lt::save_safetensors(good,
                       {{"w", lt::arange(0, 6, 1, lt::kFloat32).reshape({2, 3})},
                        {"b", lt::tensor(std::vector<bool>{true, false})},
                        {"n", lt::tensor(std::vector<int64_t>{7, 8, 9})}},
                       {{"k", "v"}});
  const Bytes raw = read_raw(good);
  const std::string p = d + "/bad.safetensors";
  int loaded = 0, rejected = 0;
  auto attempt = [&](const Bytes& b) {
    write_raw(p, b);
    try {
      lt::load_safetensors(p);
      ++loaded;
    } catch (const lt::Error&) {
      ++rejected;
    }
  };
  for (size_t n = 0; n < raw.size(); ++n) attempt(Bytes(raw.begin(), raw.begin() + n));
  EXPECT_EQ(loaded, 0) << "every truncation of the file should be rejected";

  std::mt19937 rng(1234);
  const size_t header_end = 8 + raw[0] + 256u * raw[1];
  for (int i = 0; i < 3000; ++i) {
    Bytes b = raw;
    const int edits = 1 + static_cast<int>(rng() % 3);
    for (int e = 0; e < edits; ++e) {
      // Mostly hit the length and header, where the parsing happens.
      const size_t at = rng() % 4 ? rng() % header_end : rng() % b.size();
      b[at] = static_cast<unsigned char>(rng() % 4 ? rng() : "{}[]\":,0123456789 e-."[rng() % 21]);
    }
    attempt(b);
  }
  EXPECT_GT(rejected, 0);
}
