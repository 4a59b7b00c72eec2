// apps/cli/json_field.h — strict reads of the JSON a checkpoint's metadata holds (checkpoint.cpp,
// loader_position.cpp, early_stopping.cpp).
//
// Why not nlohmann's own `get<std::int64_t>()`: given a JSON float it converts with a plain
// static_cast, so 2.7 silently becomes 2 and 5.6e48 is undefined behaviour (checkpoint_fuzzer
// found it under UBSan), and a negative number read as `std::uint64_t` wraps. Here an integer
// field takes only a JSON integer that fits the C++ type; anything else throws
// nlohmann::json::type_error, which each reader already turns into an IOError naming the file.
// Non-integer types (double, bool, std::string and their vectors) read as nlohmann reads them.
#pragma once

#include <concepts>
#include <cstdint>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

#include <nlohmann/json.hpp>

namespace ember::cli {

template <class T>
concept JsonWholeNumber = std::integral<T> && !std::same_as<T, bool>;

template <class T>
inline constexpr bool kIsVector = false;
template <class Item>
inline constexpr bool kIsVector<std::vector<Item>> = true;

template <class T>
T json_get(const nlohmann::json& value) {
  if constexpr (JsonWholeNumber<T>) {
    bool fits = false;
    if (value.is_number_unsigned()) {
      fits = value.get<std::uint64_t>() <= static_cast<std::uint64_t>(std::numeric_limits<T>::max());
    } else if (value.is_number_integer()) {  // a negative integer
      const auto number = value.get<std::int64_t>();
      fits = std::is_signed_v<T> && number >= static_cast<std::int64_t>(std::numeric_limits<T>::min());
    }
    if (!fits) {
      throw nlohmann::json::type_error::create(
          302, value.dump() + (std::is_signed_v<T> ? " is not a whole number" : " is not a non-negative whole number") +
                   " in the range of a " + std::to_string(8 * sizeof(T)) + "-bit integer",
          &value);
    }
    return value.is_number_unsigned() ? static_cast<T>(value.get<std::uint64_t>())
                                      : static_cast<T>(value.get<std::int64_t>());
  } else if constexpr (kIsVector<T>) {
    if (!value.is_array()) throw nlohmann::json::type_error::create(302, value.dump() + " is not a list", &value);
    T items;
    for (const nlohmann::json& item : value) items.push_back(json_get<typename T::value_type>(item));
    return items;
  } else {
    return value.get<T>();
  }
}

// object[key] read strictly; `fallback` where the key is absent (a field older files lack).
template <class T>
T json_value(const nlohmann::json& object, const char* key, const T& fallback) {
  if (!object.is_object()) throw nlohmann::json::type_error::create(306, object.dump() + " is not an object", &object);
  const auto found = object.find(key);
  return found == object.end() ? fallback : json_get<T>(*found);
}

}  // namespace ember::cli
