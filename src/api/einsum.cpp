// einsum as PyTorch parses it ("ij,jk->ik", implicit output, "..." broadcast dims, repeated
// indices taking diagonals), lowered to diagonal/sum/permute/reshape and one bmm per pair of
// operands, contracted left to right, so the lazy device sees matmuls and fused reductions.
#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "api/dispatch.h"
#include "core/check.h"
#include "core/shape.h"
#include "lt/ops.h"

namespace lt {
namespace {

// An operand with one label per dim (labels are chars; '...' became private labels).
struct Term {
  Tensor t;
  std::string labels;
};

// Takes the diagonal over every label that repeats within one operand.
Term take_diagonals(Term x) {
  for (;;) {
    size_t i = 0, j = 0;
    for (i = 0; i < x.labels.size(); ++i) {
      j = x.labels.find(x.labels[i], i + 1);
      if (j != std::string::npos) break;
    }
    if (i >= x.labels.size()) return x;
    const int64_t di = static_cast<int64_t>(i), dj = static_cast<int64_t>(j);
    LT_CHECK(x.t.size(di) == x.t.size(dj), "einsum: subscript ", x.labels[i],
             " repeated in one operand with sizes ", x.t.size(di), " and ", x.t.size(dj));
    x.t = x.t.diagonal(0, di, dj);  // the diagonal becomes the last dim
    std::string rest;
    for (size_t k = 0; k < x.labels.size(); ++k)
      if (k != i && k != j) rest += x.labels[k];
    x.labels = rest + x.labels[i];
  }
}

// Sums out the labels of `x` that appear in none of `keep`.
Term sum_unused(Term x, const std::string& keep) {
  std::vector<int64_t> dims;
  std::string rest;
  for (size_t i = 0; i < x.labels.size(); ++i) {
    if (keep.find(x.labels[i]) == std::string::npos)
      dims.push_back(static_cast<int64_t>(i));
    else
      rest += x.labels[i];
  }
  if (dims.empty()) return x;
  return {x.t.sum(dims), rest};
}

// x permuted so that its labels read `order` (every label of x once).
Tensor arrange(const Term& x, const std::string& order) {
  std::vector<int64_t> perm;
  for (char c : order) perm.push_back(static_cast<int64_t>(x.labels.find(c)));
  bool identity = true;
  for (size_t i = 0; i < perm.size(); ++i)
    identity = identity && perm[i] == static_cast<int64_t>(i);
  return identity ? x.t : x.t.permute(perm);
}

int64_t size_of(const Term& x, char c) {
  const size_t i = x.labels.find(c);
  return i == std::string::npos ? 1 : x.t.size(static_cast<int64_t>(i));
}

// a and b contracted over the labels they share that `keep` (the labels still needed after
// them) does not; their shared labels in `keep` are batch dims (broadcast where one is 1).
Term contract(Term a, Term b, const std::string& keep) {
  std::string batch, left, right, sum;
  for (char c : a.labels) {
    const bool in_b = b.labels.find(c) != std::string::npos;
    const bool kept = keep.find(c) != std::string::npos;
    if (in_b)
      (kept ? batch : sum) += c;
    else
      left += c;
  }
  for (char c : b.labels)
    if (a.labels.find(c) == std::string::npos) right += c;
  // The sizes of a subscript both operands have: equal, or one of them 1 (broadcast).
  auto shared_sizes = [&](char c) {
    const int64_t sa = size_of(a, c), sb = size_of(b, c);
    LT_CHECK(sa == sb || sa == 1 || sb == 1, "einsum: subscript ", c, " has sizes ", sa, " and ",
             sb, " in two operands");
    return std::make_pair(sa, sb);
  };
  std::vector<int64_t> bsizes;
  int64_t bn = 1, ln = 1, rn = 1, cn = 1;
  for (char c : batch) {
    const auto [sa, sb] = shared_sizes(c);
    bsizes.push_back(std::max(sa, sb));
    bn *= bsizes.back();
  }
  std::vector<int64_t> lsizes, rsizes;
  for (char c : left) lsizes.push_back(size_of(a, c)), ln *= lsizes.back();
  for (char c : right) rsizes.push_back(size_of(b, c)), rn *= rsizes.back();
  for (char c : sum) {
    const auto [sa, sb] = shared_sizes(c);
    if (sa != sb) {  // a broadcast summed dim: sum the size-1 side's partner first
      if (sa == 1)
        b = {b.t.sum({static_cast<int64_t>(b.labels.find(c))}, true), b.labels};
      else
        a = {a.t.sum({static_cast<int64_t>(a.labels.find(c))}, true), a.labels};
    }
    cn *= std::min(sa, sb) == 1 ? 1 : sa;
  }
  auto expanded = [&](const Term& x, const std::string& order) {
    Tensor t = arrange(x, order);
    std::vector<int64_t> want;
    for (size_t i = 0; i < batch.size(); ++i) want.push_back(bsizes[i]);
    for (size_t i = batch.size(); i < order.size(); ++i)
      want.push_back(t.size(static_cast<int64_t>(i)));
    return t.expand(want);
  };
  Tensor a3 = expanded(a, batch + left + sum).reshape({bn, ln, cn});
  Tensor b3 = expanded(b, batch + sum + right).reshape({bn, cn, rn});
  std::vector<int64_t> out = bsizes;
  out.insert(out.end(), lsizes.begin(), lsizes.end());
  out.insert(out.end(), rsizes.begin(), rsizes.end());
  return {bmm(a3, b3).reshape(out), batch + left + right};
}

}  // namespace

Tensor einsum(const std::string& equation, const std::vector<Tensor>& operands) {
  OpContext ctx("einsum");
  std::string eq;
  for (char c : equation)
    if (c != ' ') eq += c;
  const size_t arrow = eq.find("->");
  std::string lhs = eq.substr(0, arrow);
  std::vector<std::string> specs;
  for (size_t p = 0;;) {
    const size_t q = lhs.find(',', p);
    specs.push_back(lhs.substr(p, q == std::string::npos ? std::string::npos : q - p));
    if (q == std::string::npos) break;
    p = q + 1;
  }
  LT_CHECK(specs.size() == operands.size(), "einsum: the equation \"", equation, "\" has ",
           specs.size(), " operand(s) but ", operands.size(), " tensor(s) were given");
  // "..." becomes private labels (chars 1, 2, ...) for the broadcast dims, right-aligned.
  size_t ell = 0;
  for (size_t i = 0; i < specs.size(); ++i) {
    const size_t dots = specs[i].find("...");
    if (dots == std::string::npos) continue;
    const int64_t named = static_cast<int64_t>(specs[i].size()) - 3;
    ell =
        std::max<size_t>(ell, static_cast<size_t>(std::max<int64_t>(operands[i].dim() - named, 0)));
  }
  std::vector<Term> terms;
  for (size_t i = 0; i < specs.size(); ++i) {
    const std::string& s = specs[i];
    const size_t dots = s.find("...");
    std::string letters = dots == std::string::npos ? s : s.substr(0, dots) + s.substr(dots + 3);
    for (char c : letters)
      LT_CHECK((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'),
               "einsum: subscripts must be "
               "letters, got '",
               c, "' in \"", equation, "\"");
    const int64_t d = operands[i].dim(), named = static_cast<int64_t>(letters.size());
    LT_CHECK(dots != std::string::npos ? d >= named : d == named, "einsum: operand ", i, " has ", d,
             " dims but its subscripts \"", s, "\" name ", named);
    std::string labels = letters;
    if (dots != std::string::npos) {
      const size_t k = static_cast<size_t>(d - named);
      std::string priv;
      for (size_t j = 0; j < k; ++j) priv += static_cast<char>(1 + (ell - k) + j);
      labels = s.substr(0, dots) + priv + s.substr(dots + 3);
    }
    terms.push_back(take_diagonals({operands[i], labels}));
  }
  std::string ell_labels;
  for (size_t j = 0; j < ell; ++j) ell_labels += static_cast<char>(1 + j);
  std::string out;
  if (arrow != std::string::npos) {
    std::string rhs = eq.substr(arrow + 2);
    const size_t dots = rhs.find("...");
    out = dots == std::string::npos ? rhs : rhs.substr(0, dots) + ell_labels + rhs.substr(dots + 3);
    for (char c : out) {
      LT_CHECK(std::count(out.begin(), out.end(), c) == 1, "einsum: output subscript ", c,
               " appears more than once in \"", equation, "\"");
      bool found = false;
      for (const Term& t : terms) found = found || t.labels.find(c) != std::string::npos;
      LT_CHECK(found, "einsum: output subscript ", c, " does not appear in any input of \"",
               equation, "\"");
    }
  } else {  // implicit: "..." first, then the subscripts written once, alphabetically
    std::map<char, int> count;
    for (char c : lhs)
      if (c != '.' && c != ',') ++count[c];
    out = ell_labels;
    for (auto [c, n] : count)
      if (n == 1 && c > 31) out += c;
  }
  // Contract left to right; each step keeps what later operands or the output need.
  Term acc = terms[0];
  for (size_t i = 1; i < terms.size(); ++i) {
    std::string keep = out;
    for (size_t j = i + 1; j < terms.size(); ++j) keep += terms[j].labels;
    acc = sum_unused(acc, keep + terms[i].labels);
    Term next = sum_unused(terms[i], keep + acc.labels);
    acc = contract(acc, next, keep);
  }
  acc = sum_unused(acc, out);
  return arrange(acc, out);
}

}  // namespace lt
