// safetensors reader and writer with its own small JSON parser: the header is untrusted input, so
// every size and offset is checked before anything is allocated or read.
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <set>
#include <string>
#include <system_error>
#include <utility>
#include <vector>

#include "core/check.h"
#include "core/shape.h"
#include "eager/tensor_util.h"
#include "lt/serialize.h"

namespace lt {
namespace {

constexpr uint64_t kMaxHeaderBytes = 100'000'000;  // the reference implementation's limit
constexpr int kMaxJsonDepth = 64;                  // bounds recursion on hostile input
constexpr const char* kMetadataKey = "__metadata__";

// ---- dtypes

const char* st_dtype_name(Dtype t) {
  switch (t) {
    case kFloat32:
      return "F32";
    case kFloat64:
      return "F64";
    case kInt32:
      return "I32";
    case kInt64:
      return "I64";
    case kBool:
      return "BOOL";
    case kInt8:
      return "I8";
    case kFloat16:
      return "F16";
    case kBFloat16:
      return "BF16";
  }
  return "?";
}

bool parse_st_dtype(const std::string& s, Dtype* out) {
  for (Dtype t : {kFloat32, kFloat64, kInt32, kInt64, kBool, kInt8, kFloat16, kBFloat16}) {
    if (s == st_dtype_name(t)) {
      *out = t;
      return true;
    }
  }
  return false;
}

bool is_known_unsupported_dtype(const std::string& s) {
  static const char* const kNames[] = {"F8_E4M3", "F8_E5M2", "F8_E8M0", "F6_E2M3",
                                       "F6_E3M2", "F4",      "U8",      "I16",
                                       "U16",     "U32",     "U64",     "C64"};
  return std::find(std::begin(kNames), std::end(kNames), s) != std::end(kNames);
}

// Reverses each element's bytes; only used on big-endian hosts, where the file's little-endian
// data must be converted.
void byteswap_elements(char* p, size_t n_elems, size_t elem_size) {
  if (elem_size <= 1) return;
  for (size_t i = 0; i < n_elems; ++i) std::reverse(p + i * elem_size, p + (i + 1) * elem_size);
}

// ---- JSON

struct Json {
  enum class Kind { Null, Bool, Number, String, Array, Object };
  Kind kind = Kind::Null;
  bool boolean = false;
  std::string text;  // String: the decoded value; Number: the literal as written
  std::vector<Json> array;
  std::vector<std::pair<std::string, Json>> object;  // in file order

  const Json* find(const std::string& key) const {
    for (const auto& [k, v] : object)
      if (k == key) return &v;
    return nullptr;
  }
};

const char* kind_name(Json::Kind k) {
  switch (k) {
    case Json::Kind::Null:
      return "null";
    case Json::Kind::Bool:
      return "a boolean";
    case Json::Kind::Number:
      return "a number";
    case Json::Kind::String:
      return "a string";
    case Json::Kind::Array:
      return "an array";
    case Json::Kind::Object:
      return "an object";
  }
  return "?";
}

// A strict RFC 8259 parser over the header bytes. Errors name the byte offset so a damaged
// header can be inspected with a hex dump.
class JsonParser {
 public:
  JsonParser(const std::string& path, const char* p, size_t n) : path_(path), s_(p), n_(n) {}

  Json parse_document() {
    skip_ws();
    Json v = parse_value(0);
    skip_ws();
    if (pos_ != n_) fail("unexpected '", printable(s_[pos_]), "' after the JSON value");
    return v;
  }

 private:
  template <typename... Args>
  [[noreturn]] void fail(const Args&... args) const {
    throw_error("load_safetensors: ", path_, ": the header is not valid JSON: ", args...,
                " at byte ", pos_, " of the header");
  }
  static std::string printable(char c) {
    const auto u = static_cast<unsigned char>(c);
    if (u >= 0x20 && u < 0x7F) return std::string(1, c);
    char buf[8];
    std::snprintf(buf, sizeof buf, "\\x%02X", u);
    return buf;
  }

  void skip_ws() {
    while (pos_ < n_ &&
           (s_[pos_] == ' ' || s_[pos_] == '\t' || s_[pos_] == '\n' || s_[pos_] == '\r'))
      ++pos_;
  }
  void expect(char c) {
    if (pos_ >= n_) fail("expected '", c, "' but the header ended");
    if (s_[pos_] != c) fail("expected '", c, "' but found '", printable(s_[pos_]), "'");
    ++pos_;
  }
  bool consume_literal(const char* lit) {
    const size_t len = std::strlen(lit);
    if (n_ - pos_ < len || std::memcmp(s_ + pos_, lit, len) != 0) return false;
    pos_ += len;
    return true;
  }

  Json parse_value(int depth) {
    if (depth > kMaxJsonDepth) fail("nesting deeper than ", kMaxJsonDepth, " levels");
    if (pos_ >= n_) fail("expected a value but the header ended");
    Json v;
    const char c = s_[pos_];
    if (c == '{') {
      v.kind = Json::Kind::Object;
      parse_object(v, depth);
    } else if (c == '[') {
      v.kind = Json::Kind::Array;
      parse_array(v, depth);
    } else if (c == '"') {
      v.kind = Json::Kind::String;
      v.text = parse_string();
    } else if (c == '-' || (c >= '0' && c <= '9')) {
      v.kind = Json::Kind::Number;
      v.text = parse_number();
    } else if (consume_literal("true")) {
      v.kind = Json::Kind::Bool;
      v.boolean = true;
    } else if (consume_literal("false")) {
      v.kind = Json::Kind::Bool;
    } else if (consume_literal("null")) {
      v.kind = Json::Kind::Null;
    } else {
      fail("unexpected '", printable(c), "'");
    }
    return v;
  }

  void parse_object(Json& v, int depth) {
    expect('{');
    skip_ws();
    if (pos_ < n_ && s_[pos_] == '}') {
      ++pos_;
      return;
    }
    std::set<std::string> seen;
    while (true) {
      skip_ws();
      if (pos_ >= n_ || s_[pos_] != '"') fail("expected a quoted key");
      std::string key = parse_string();
      // Duplicate keys are legal JSON with no agreed meaning; two readers could see different
      // tensors under one name, so refuse them.
      if (!seen.insert(key).second) fail("duplicate key \"", key, "\"");
      skip_ws();
      expect(':');
      skip_ws();
      Json value = parse_value(depth + 1);
      v.object.emplace_back(std::move(key), std::move(value));
      skip_ws();
      if (pos_ < n_ && s_[pos_] == ',') {
        ++pos_;
        continue;
      }
      expect('}');
      return;
    }
  }

  void parse_array(Json& v, int depth) {
    expect('[');
    skip_ws();
    if (pos_ < n_ && s_[pos_] == ']') {
      ++pos_;
      return;
    }
    while (true) {
      skip_ws();
      v.array.push_back(parse_value(depth + 1));
      skip_ws();
      if (pos_ < n_ && s_[pos_] == ',') {
        ++pos_;
        continue;
      }
      expect(']');
      return;
    }
  }

  uint32_t parse_hex4() {
    if (n_ - pos_ < 4) fail("truncated \\u escape");
    uint32_t v = 0;
    for (int i = 0; i < 4; ++i) {
      const char c = s_[pos_++];
      v <<= 4;
      if (c >= '0' && c <= '9')
        v |= static_cast<uint32_t>(c - '0');
      else if (c >= 'a' && c <= 'f')
        v |= static_cast<uint32_t>(c - 'a' + 10);
      else if (c >= 'A' && c <= 'F')
        v |= static_cast<uint32_t>(c - 'A' + 10);
      else
        fail("bad hex digit in \\u escape");
    }
    return v;
  }

  static void append_utf8(std::string& out, uint32_t cp) {
    if (cp < 0x80) {
      out += static_cast<char>(cp);
    } else if (cp < 0x800) {
      out += static_cast<char>(0xC0 | (cp >> 6));
      out += static_cast<char>(0x80 | (cp & 0x3F));
    } else if (cp < 0x10000) {
      out += static_cast<char>(0xE0 | (cp >> 12));
      out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
      out += static_cast<char>(0x80 | (cp & 0x3F));
    } else {
      out += static_cast<char>(0xF0 | (cp >> 18));
      out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
      out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
      out += static_cast<char>(0x80 | (cp & 0x3F));
    }
  }

  std::string parse_string() {
    expect('"');
    std::string out;
    while (true) {
      if (pos_ >= n_) fail("unterminated string");
      const char c = s_[pos_++];
      if (c == '"') return out;
      if (static_cast<unsigned char>(c) < 0x20) {
        --pos_;
        fail("raw control character in a string");
      }
      if (c != '\\') {
        out += c;
        continue;
      }
      if (pos_ >= n_) fail("unterminated escape");
      const char e = s_[pos_++];
      switch (e) {
        case '"':
          out += '"';
          break;
        case '\\':
          out += '\\';
          break;
        case '/':
          out += '/';
          break;
        case 'b':
          out += '\b';
          break;
        case 'f':
          out += '\f';
          break;
        case 'n':
          out += '\n';
          break;
        case 'r':
          out += '\r';
          break;
        case 't':
          out += '\t';
          break;
        case 'u': {
          uint32_t cp = parse_hex4();
          if (cp >= 0xD800 && cp <= 0xDBFF) {  // a high surrogate needs its low half
            if (!consume_literal("\\u")) fail("unpaired surrogate in \\u escape");
            const uint32_t lo = parse_hex4();
            if (lo < 0xDC00 || lo > 0xDFFF) fail("unpaired surrogate in \\u escape");
            cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
          } else if (cp >= 0xDC00 && cp <= 0xDFFF) {
            fail("unpaired surrogate in \\u escape");
          }
          append_utf8(out, cp);
          break;
        }
        default:
          --pos_;
          fail("bad escape '\\", printable(e), "'");
      }
    }
  }

  std::string parse_number() {
    const size_t start = pos_;
    auto digits = [&] {
      const size_t d0 = pos_;
      while (pos_ < n_ && s_[pos_] >= '0' && s_[pos_] <= '9') ++pos_;
      return pos_ - d0;
    };
    if (s_[pos_] == '-') ++pos_;
    if (pos_ < n_ && s_[pos_] == '0') {
      ++pos_;
    } else if (digits() == 0) {
      fail("bad number");
    }
    if (pos_ < n_ && s_[pos_] == '.') {
      ++pos_;
      if (digits() == 0) fail("bad number: no digits after '.'");
    }
    if (pos_ < n_ && (s_[pos_] == 'e' || s_[pos_] == 'E')) {
      ++pos_;
      if (pos_ < n_ && (s_[pos_] == '+' || s_[pos_] == '-')) ++pos_;
      if (digits() == 0) fail("bad number: no digits in the exponent");
    }
    return std::string(s_ + start, pos_ - start);
  }

  const std::string& path_;
  const char* s_;
  size_t n_;
  size_t pos_ = 0;
};

// A JSON number that is a plain non-negative integer fitting in int64 (what shapes and offsets
// must be); nothing else converts.
bool as_index(const Json& v, int64_t* out) {
  if (v.kind != Json::Kind::Number || v.text.empty() || v.text.size() > 19) return false;
  uint64_t x = 0;
  for (char c : v.text) {
    if (c < '0' || c > '9') return false;
    x = x * 10 + static_cast<uint64_t>(c - '0');
  }
  if (x > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) return false;
  *out = static_cast<int64_t>(x);
  return true;
}

// ---- header

struct Entry {
  std::string name;
  Dtype dtype = kFloat32;
  std::vector<int64_t> shape;
  int64_t begin = 0;
  int64_t end = 0;
};

struct Header {
  std::vector<Entry> entries;  // header order
  std::map<std::string, std::string> metadata;
  uint64_t data_start = 0;  // file offset of the data section
};

Header read_header(const std::string& path, std::ifstream& in) {
  std::error_code ec;
  LT_CHECK(std::filesystem::exists(path, ec), "load_safetensors: ", path, ": no such file");
  LT_CHECK(std::filesystem::is_regular_file(path, ec), "load_safetensors: ", path,
           ": not a regular file");
  const uint64_t file_size = std::filesystem::file_size(path, ec);
  LT_CHECK(!ec, "load_safetensors: ", path, ": cannot read its size (", ec.message(), ")");
  in.open(path, std::ios::binary);
  LT_CHECK(in.is_open(), "load_safetensors: ", path, ": cannot open (", std::strerror(errno), ")");
  LT_CHECK(file_size >= 8, "load_safetensors: ", path, ": ", file_size,
           " bytes is too small for a safetensors file (it starts with an 8-byte header length)");

  unsigned char len_bytes[8];
  in.read(reinterpret_cast<char*>(len_bytes), 8);
  LT_CHECK(in.gcount() == 8, "load_safetensors: ", path, ": cannot read the header length");
  uint64_t header_len = 0;
  for (int i = 7; i >= 0; --i) header_len = (header_len << 8) | len_bytes[i];
  LT_CHECK(header_len >= 2, "load_safetensors: ", path, ": header length ", header_len,
           " is too small to hold a JSON object");
  LT_CHECK(header_len <= kMaxHeaderBytes, "load_safetensors: ", path, ": header length ",
           header_len, " exceeds the limit of ", kMaxHeaderBytes,
           " bytes; the file is damaged or not safetensors");
  LT_CHECK(header_len <= file_size - 8, "load_safetensors: ", path, ": header length ", header_len,
           " runs past the end of the ", file_size,
           "-byte file; the file is truncated or not safetensors");

  std::string text(static_cast<size_t>(header_len), '\0');
  in.read(text.data(), static_cast<std::streamsize>(header_len));
  LT_CHECK(static_cast<uint64_t>(in.gcount()) == header_len, "load_safetensors: ", path,
           ": cannot read the ", header_len, "-byte header");
  LT_CHECK(text[0] == '{', "load_safetensors: ", path,
           ": the header does not start with '{'; the file is damaged or not safetensors");

  const Json root = JsonParser(path, text.data(), text.size()).parse_document();
  LT_CHECK(root.kind == Json::Kind::Object, "load_safetensors: ", path,
           ": the header must be a JSON object");

  Header h;
  h.data_start = 8 + header_len;
  const uint64_t body_size = file_size - h.data_start;
  for (const auto& [name, v] : root.object) {
    if (name == kMetadataKey) {
      LT_CHECK(v.kind == Json::Kind::Object, "load_safetensors: ", path,
               ": \"__metadata__\" must be an object of strings, got ", kind_name(v.kind));
      for (const auto& [k, mv] : v.object) {
        LT_CHECK(mv.kind == Json::Kind::String, "load_safetensors: ", path, ": \"__metadata__\" ",
                 "value \"", k, "\" must be a string, got ", kind_name(mv.kind));
        h.metadata[k] = mv.text;
      }
      continue;
    }
    const std::string where = "load_safetensors: " + path + ": tensor \"" + name + "\": ";
    LT_CHECK(v.kind == Json::Kind::Object, where, "expected an object with dtype, shape and ",
             "data_offsets, got ", kind_name(v.kind));
    Entry e;
    e.name = name;

    const Json* dt = v.find("dtype");
    LT_CHECK(dt != nullptr, where, "missing \"dtype\"");
    LT_CHECK(dt->kind == Json::Kind::String, where, "\"dtype\" must be a string, got ",
             kind_name(dt->kind));
    if (!parse_st_dtype(dt->text, &e.dtype)) {
      LT_CHECK(!is_known_unsupported_dtype(dt->text), where, "dtype ", dt->text,
               " is not supported (lt has F32, F64, F16, BF16, I64, I32, I8, BOOL)");
      throw_error(where, "unknown dtype \"", dt->text, "\"");
    }

    const Json* shape = v.find("shape");
    LT_CHECK(shape != nullptr, where, "missing \"shape\"");
    LT_CHECK(shape->kind == Json::Kind::Array, where, "\"shape\" must be an array, got ",
             kind_name(shape->kind));
    // The element count (zero dims aside) and the byte count must stay representable, or the
    // strides computed later would overflow.
    int64_t nonzero_numel = 1;
    bool empty = false;
    for (const Json& d : shape->array) {
      int64_t s = 0;
      LT_CHECK(as_index(d, &s), where, "shape entries must be non-negative integers, got ",
               d.kind == Json::Kind::Number ? d.text : std::string(kind_name(d.kind)));
      e.shape.push_back(s);
      if (s == 0) {
        empty = true;
        continue;
      }
      LT_CHECK(nonzero_numel <= std::numeric_limits<int64_t>::max() / 8 / s, where, "shape ",
               shape_str(e.shape), "... is too large");
      nonzero_numel *= s;
    }
    const int64_t nbytes = empty ? 0 : nonzero_numel * static_cast<int64_t>(dtype_size(e.dtype));

    const Json* off = v.find("data_offsets");
    LT_CHECK(off != nullptr, where, "missing \"data_offsets\"");
    LT_CHECK(off->kind == Json::Kind::Array && off->array.size() == 2, where,
             "\"data_offsets\" must be an array [begin, end]");
    LT_CHECK(as_index(off->array[0], &e.begin) && as_index(off->array[1], &e.end), where,
             "\"data_offsets\" must be non-negative integers");
    LT_CHECK(e.begin <= e.end, where, "data_offsets [", e.begin, ", ", e.end,
             "] has begin after end");
    LT_CHECK(static_cast<uint64_t>(e.end) <= body_size, where, "data_offsets [", e.begin, ", ",
             e.end, "] run past the ", body_size,
             "-byte data section; the file is truncated or the header damaged");
    LT_CHECK(e.end - e.begin == nbytes, where, "data_offsets [", e.begin, ", ", e.end, "] span ",
             e.end - e.begin, " bytes but ", st_dtype_name(e.dtype), " ", shape_str(e.shape),
             " needs ", nbytes);
    h.entries.push_back(std::move(e));
  }

  // Overlaps would make one tensor's bytes show up in another; empty tensors occupy nothing.
  std::vector<const Entry*> by_offset;
  for (const Entry& e : h.entries)
    if (e.end > e.begin) by_offset.push_back(&e);
  std::sort(by_offset.begin(), by_offset.end(),
            [](const Entry* a, const Entry* b) { return a->begin < b->begin; });
  for (size_t i = 1; i < by_offset.size(); ++i) {
    const Entry& a = *by_offset[i - 1];
    const Entry& b = *by_offset[i];
    LT_CHECK(b.begin >= a.end, "load_safetensors: ", path, ": tensors \"", a.name, "\" [", a.begin,
             ", ", a.end, ") and \"", b.name, "\" [", b.begin, ", ", b.end,
             ") overlap in the data section");
  }
  return h;
}

void append_json_string(std::string& out, const std::string& s) {
  out += '"';
  for (char c : s) {
    const auto u = static_cast<unsigned char>(c);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (u < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04X", u);
      out += buf;
    } else {
      out += c;  // bytes >= 0x80 pass through: names are expected to be UTF-8
    }
  }
  out += '"';
}

}  // namespace

void save_safetensors(const std::string& path, const NamedTensors& tensors,
                      const std::map<std::string, std::string>& metadata) {
  std::set<std::string> names;
  std::vector<Tensor> dense;
  dense.reserve(tensors.size());
  for (const auto& [name, t] : tensors) {
    LT_CHECK(name != kMetadataKey, "save_safetensors: ", path, ": \"", kMetadataKey,
             "\" is reserved and cannot name a tensor");
    LT_CHECK(names.insert(name).second, "save_safetensors: ", path, ": duplicate tensor name \"",
             name, "\"");
    LT_CHECK(t.defined(), "save_safetensors: ", path, ": tensor \"", name, "\" is undefined");
    dense.push_back(t.to(kCPU).contiguous());
  }

  // Data goes in order of decreasing element size so that, with the 8-aligned data start, every
  // tensor is naturally aligned for readers that map the file (as the reference writer does).
  // The header keeps the caller's order, which is what load_safetensors returns.
  std::vector<size_t> placement(tensors.size());
  for (size_t i = 0; i < placement.size(); ++i) placement[i] = i;
  std::stable_sort(placement.begin(), placement.end(), [&](size_t a, size_t b) {
    return dense[a].element_size() > dense[b].element_size();
  });
  std::vector<int64_t> begin(tensors.size());
  int64_t offset = 0;
  for (size_t i : placement) {
    begin[i] = offset;
    offset += dense[i].numel() * static_cast<int64_t>(dense[i].element_size());
  }

  std::string header = "{";
  bool first = true;
  if (!metadata.empty()) {
    header += "\"__metadata__\":{";
    for (const auto& [k, v] : metadata) {
      if (!first) header += ',';
      first = false;
      append_json_string(header, k);
      header += ':';
      append_json_string(header, v);
    }
    header += '}';
    first = false;
  }
  for (size_t i = 0; i < tensors.size(); ++i) {
    const Tensor& t = dense[i];
    if (!first) header += ',';
    first = false;
    append_json_string(header, tensors[i].first);
    header += ":{\"dtype\":\"";
    header += st_dtype_name(t.dtype());
    header += "\",\"shape\":[";
    for (int64_t d = 0; d < t.dim(); ++d) {
      if (d) header += ',';
      header += std::to_string(t.size(d));
    }
    const int64_t nbytes = t.numel() * static_cast<int64_t>(t.element_size());
    header += "],\"data_offsets\":[" + std::to_string(begin[i]) + "," +
              std::to_string(begin[i] + nbytes) + "]}";
  }
  header += '}';
  header.append((8 - header.size() % 8) % 8, ' ');

  const std::string tmp = path + ".tmp" + std::to_string(::getpid());
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    LT_CHECK(out.is_open(), "save_safetensors: cannot create ", tmp, " (", std::strerror(errno),
             ")");
    unsigned char len_bytes[8];
    uint64_t len = header.size();
    for (int i = 0; i < 8; ++i) len_bytes[i] = static_cast<unsigned char>(len >> (8 * i));
    out.write(reinterpret_cast<const char*>(len_bytes), 8);
    out.write(header.data(), static_cast<std::streamsize>(header.size()));
    std::vector<char> swapped;
    for (size_t i : placement) {
      const Tensor& t = dense[i];
      const size_t nbytes = static_cast<size_t>(t.numel()) * t.element_size();
      if (nbytes == 0) continue;
      const char* p = static_cast<const char*>(t.raw_data_ptr());
      if constexpr (std::endian::native == std::endian::big) {
        swapped.assign(p, p + nbytes);
        byteswap_elements(swapped.data(), static_cast<size_t>(t.numel()), t.element_size());
        p = swapped.data();
      }
      out.write(p, static_cast<std::streamsize>(nbytes));
    }
    out.flush();
    if (!out) {
      out.close();
      std::error_code ec;
      std::filesystem::remove(tmp, ec);
      throw_error("save_safetensors: writing ", tmp, " failed (disk full?)");
    }
  }
  std::error_code ec;
  std::filesystem::rename(tmp, path, ec);
  if (ec) {
    std::error_code ignored;
    std::filesystem::remove(tmp, ignored);
    throw_error("save_safetensors: cannot move ", tmp, " to ", path, " (", ec.message(), ")");
  }
}

NamedTensors load_safetensors(const std::string& path) {
  std::ifstream in;
  const Header h = read_header(path, in);
  NamedTensors out;
  out.reserve(h.entries.size());
  for (const Entry& e : h.entries) {
    Tensor t = make_eager(e.shape, e.dtype);
    const int64_t nbytes = e.end - e.begin;
    if (nbytes > 0) {
      char* p = static_cast<char*>(t.raw_data_ptr());
      in.clear();
      in.seekg(static_cast<std::streamoff>(h.data_start + static_cast<uint64_t>(e.begin)));
      in.read(p, static_cast<std::streamsize>(nbytes));
      LT_CHECK(in.gcount() == nbytes, "load_safetensors: ", path, ": tensor \"", e.name,
               "\": cannot read its ", nbytes, " bytes (the file changed while reading?)");
      if constexpr (std::endian::native == std::endian::big)
        byteswap_elements(p, static_cast<size_t>(t.numel()), t.element_size());
      // A bool byte other than 0 or 1 is undefined behaviour in C++; read any nonzero as true.
      if (e.dtype == kBool)
        for (int64_t i = 0; i < nbytes; ++i) p[i] = p[i] != 0 ? 1 : 0;
    }
    out.emplace_back(e.name, std::move(t));
  }
  return out;
}

std::map<std::string, std::string> load_safetensors_metadata(const std::string& path) {
  std::ifstream in;
  return read_header(path, in).metadata;
}

}  // namespace lt
