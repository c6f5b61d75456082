// core/why_not.hpp: WhyNot and Maybe<T>.
#include "core/why_not.hpp"

#include <memory>
#include <stdexcept>
#include <string>
#include <type_traits>

#include <gtest/gtest.h>

namespace dmabench {
namespace {

struct Base {
  virtual ~Base() = default;
  virtual int id() const { return 1; }
};
struct Derived : Base {
  int id() const override { return 2; }
};

Maybe<int> count(bool ok) {
  if (!ok) return Maybe<int>::no("no devices");
  return 3;
}

Maybe<std::unique_ptr<Base>> make(bool ok) {
  if (!ok) return Maybe<std::unique_ptr<Base>>::no("not built");
  return std::make_unique<Derived>();  // converts to the base pointer
}

TEST(WhyNot, NulloptWhenItCan) {
  WhyNot can;
  EXPECT_FALSE(can);
  WhyNot cannot = "the reason";
  ASSERT_TRUE(cannot);
  EXPECT_EQ(*cannot, "the reason");
}

TEST(Maybe, HoldsAValue) {
  const auto n = count(true);
  ASSERT_TRUE(n);
  EXPECT_EQ(*n, 3);
  EXPECT_EQ(n.value(), 3);
  EXPECT_EQ(n.why_not(), "");
}

TEST(Maybe, HoldsTheReason) {
  const auto n = count(false);
  EXPECT_FALSE(n);
  EXPECT_EQ(n.why_not(), "no devices");
  try {
    (void)n.value();
    FAIL() << "value() of an empty Maybe did not throw";
  } catch (const std::logic_error& e) {
    EXPECT_NE(std::string(e.what()).find("no devices"), std::string::npos) << e.what();
  }
}

TEST(Maybe, MoveOnlyValues) {
  auto p = make(true);
  ASSERT_TRUE(p);
  EXPECT_EQ((*p)->id(), 2);
  EXPECT_EQ(p->get()->id(), 2);
  std::unique_ptr<Base> taken = std::move(p).value();
  ASSERT_NE(taken, nullptr);
  EXPECT_EQ(taken->id(), 2);

  auto none = make(false);
  EXPECT_FALSE(none);
  EXPECT_EQ(none.why_not(), "not built");
  EXPECT_THROW((void)std::move(none).value(), std::logic_error);
}

TEST(Maybe, NotFromNullptr) {
  static_assert(!std::is_convertible_v<std::nullptr_t, Maybe<std::unique_ptr<Base>>>);
  static_assert(std::is_convertible_v<std::unique_ptr<Derived>, Maybe<std::unique_ptr<Base>>>);
  static_assert(std::is_convertible_v<int, Maybe<int>>);
  static_assert(!std::is_convertible_v<Maybe<int>, bool>);  // explicit operator bool
}

}  // namespace
}  // namespace dmabench
