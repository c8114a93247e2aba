// The labels a rank's step gives its communication calls ("TP all_reduce of layer 2
// forward, micro-batch 1"), made once and kept: a step names the same calls step after step,
// and formatting each label again cost more than many of the small calls it names.
#pragma once

#include <array>
#include <map>
#include <string>
#include <string_view>

namespace ranklab {

class LabelCache {
 public:
  /// The caller's name for a label: what it labels and up to three numbers (layer,
  /// micro-batch, chunk...), in the caller's own order.
  using Key = std::array<int, 4>;

  /// Every label made hereafter ends with `suffix` (", step 3"); a suffix other than the
  /// last one forgets the labels made with that one.
  void use_suffix(std::string_view suffix) {
    if (suffix == suffix_) return;
    suffix_.assign(suffix);
    labels_.clear();
  }

  /// The label of `key`: make()'s text (suffix included) the first time it is asked for.
  template <typename Make>
  const std::string& get(const Key& key, Make&& make) {
    auto [it, added] = labels_.try_emplace(key);
    if (added) it->second = make();
    return it->second;
  }

 private:
  std::string suffix_;
  std::map<Key, std::string> labels_;
};

}  // namespace ranklab
