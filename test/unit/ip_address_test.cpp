#include "common/ip_address.h"

#include <gtest/gtest.h>

namespace tandem {
namespace {

TEST(IpAddress, ParsesBothFamiliesAndPrintsThemBack) {
  auto v4 = IpAddress::parse("198.51.100.7");
  ASSERT_TRUE(v4);
  EXPECT_EQ(v4->family, Family::kInet);
  EXPECT_EQ(v4->toString(), "198.51.100.7");
  auto v6 = IpAddress::parse("2001:DB8::0:1");
  ASSERT_TRUE(v6);
  EXPECT_EQ(v6->family, Family::kInet6);
  EXPECT_EQ(v6->toString(), "2001:db8::1");
}

TEST(IpAddress, RejectsNonAddresses) {
  for (const char* bad :
       {"", "198.51.100", "198.51.100.256", "host", "1.2.3.4/24", "::g", "[::1]", " 1.2.3.4"}) {
    EXPECT_FALSE(IpAddress::parse(bad)) << bad;
  }
}

TEST(IpAddress, KnowsMulticast) {
  EXPECT_TRUE(IpAddress::parse("224.0.0.81")->isMulticast());
  EXPECT_TRUE(IpAddress::parse("ff02::12")->isMulticast());
  EXPECT_FALSE(IpAddress::parse("198.51.100.1")->isMulticast());
}

TEST(IpPrefix, NeedsALengthWithinTheFamily) {
  EXPECT_EQ(IpPrefix::parse("198.51.100.10/24")->length, 24);
  EXPECT_EQ(IpPrefix::parse("2001:db8::10/64")->toString(), "2001:db8::10/64");
  for (const char* bad : {"198.51.100.10", "198.51.100.10/33", "2001:db8::/129", "1.2.3.4/",
                          "1.2.3.4/x", "1.2.3.4/-1", "1.2.3.4/24/1"}) {
    EXPECT_FALSE(IpPrefix::parse(bad)) << bad;
  }
}

TEST(Endpoint, ReadsPortsAndBracketedIpv6) {
  auto e = Endpoint::parse("198.51.100.10:80", false);
  ASSERT_TRUE(e);
  EXPECT_EQ(e->port, 80);
  auto e6 = Endpoint::parse("[2001:db8::10]:443", false);
  ASSERT_TRUE(e6);
  EXPECT_EQ(e6->port, 443);
  EXPECT_EQ(e6->toString(), "[2001:db8::10]:443");
}

TEST(Endpoint, PortIsOptionalOnlyWhenAllowed) {
  EXPECT_FALSE(Endpoint::parse("198.51.100.10", false));
  EXPECT_EQ(Endpoint::parse("198.51.100.10", true)->port, 0);
  EXPECT_EQ(Endpoint::parse("2001:db8::1", true)->address.family, Family::kInet6);
  EXPECT_EQ(Endpoint::parse("[2001:db8::1]", true)->port, 0);
}

TEST(Endpoint, RejectsBadPorts) {
  for (const char* bad : {"1.2.3.4:0", "1.2.3.4:65536", "1.2.3.4:", "1.2.3.4:http",
                          "[2001:db8::1]80", "[1.2.3.4]:80", "[2001:db8::1:80"}) {
    EXPECT_FALSE(Endpoint::parse(bad, true)) << bad;
  }
}

TEST(Netmask, AcceptsOnlyContiguousMasks) {
  EXPECT_EQ(netmaskLength(*IpAddress::parse("255.255.255.0")), 24);
  EXPECT_EQ(netmaskLength(*IpAddress::parse("255.255.255.255")), 32);
  EXPECT_EQ(netmaskLength(*IpAddress::parse("0.0.0.0")), 0);
  EXPECT_FALSE(netmaskLength(*IpAddress::parse("255.0.255.0")));
  EXPECT_FALSE(netmaskLength(*IpAddress::parse("255.255.255.1")));
}

}  // namespace
}  // namespace tandem

namespace tandem {
namespace {

// A config diagnostic names the actual cause (issue 12): "port 0 is not a port", not "is not an
// address:port".
TEST(EndpointProblem, NamesThePartThatIsWrong) {
  EXPECT_EQ(endpointProblem("198.51.100.10:0", false), "port 0 is not a port");
  EXPECT_EQ(endpointProblem("198.51.100.10:70000", false), "port 70000 is over 65535");
  EXPECT_EQ(endpointProblem("198.51.100.10:http", false), "port \"http\" is not a number");
  EXPECT_EQ(endpointProblem("198.51.100.10:", false), "it has no port after the colon");
  EXPECT_EQ(endpointProblem("198.51.100.10", false), "it has no port");
  EXPECT_EQ(endpointProblem("localhost:80", true),
            "\"localhost\" is not an IP address (names are not resolved)");
  EXPECT_EQ(endpointProblem("198.51.100.300:80", false),
            "\"198.51.100.300\" is not an IP address (names are not resolved)");
  EXPECT_EQ(endpointProblem("[198.51.100.10]:80", false), "brackets are for IPv6 addresses");
  EXPECT_EQ(endpointProblem("[2001:db8::10:80", false), "its [ has no ]");
  EXPECT_EQ(endpointProblem("2001:db8::10", false),
            "an IPv6 address takes its port in brackets, e.g. [2001:db8::10]:80");
  EXPECT_EQ(endpointProblem("[2001:db8::10]:0", false), "port 0 is not a port");
  // Each of them is refused by the parser, for which this only gives the reason.
  for (const char* bad : {"198.51.100.10:0", "198.51.100.10:70000", "localhost:80",
                          "[198.51.100.10]:80", "2001:db8::10"}) {
    EXPECT_FALSE(Endpoint::parse(bad, false)) << bad;
  }
}

}  // namespace
}  // namespace tandem
