// The digests behind tokens and trigger signatures, against published test vectors.
#include "server/auth.h"

#include <gtest/gtest.h>

namespace baton::server {
namespace {

TEST(AuthDigests, Sha256HexMatchesFips180Vectors) {
  EXPECT_EQ(Sha256Hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(Sha256Hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  // The same answer every time: the fetched digest is reused, not used up.
  EXPECT_EQ(Sha256Hex("abc"), Sha256Hex(std::string("abc")));
}

TEST(AuthDigests, HmacSha256HexMatchesRfc4231) {
  // Test case 2 of RFC 4231.
  EXPECT_EQ(HmacSha256Hex("Jefe", "what do ya want for nothing?"),
            "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843");
}

}  // namespace
}  // namespace baton::server
