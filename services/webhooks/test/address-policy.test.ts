/** Which addresses deliveries may reach (docs/webhooks.md, Security): the pure policy and the URL check, every range. */
import test from "ava";
import { addressPolicy, parseAllowedNetworks, urlProblem } from "@corral/webhooks/testing";

const strict = addressPolicy();

test("refused: loopback, private, shared, link-local and metadata, multicast, reserved, unspecified", (t) => {
  for (const address of [
    "127.0.0.1",
    "127.255.0.9",
    "10.0.0.1",
    "172.16.5.5",
    "172.31.255.255",
    "192.168.0.10",
    "100.64.1.1",
    "169.254.169.254",
    "0.0.0.0",
    "224.0.0.1",
    "240.0.0.1",
    "255.255.255.255",
    "::1",
    "::",
    "fd00:ec2::254",
    "fc00::1",
    "fe80::1",
    "ff02::1",
    "::ffff:127.0.0.1",
    "::ffff:a9fe:a9fe",
    "64:ff9b::10.0.0.1",
  ]) {
    t.not(strict.refusalOf(address), undefined, address);
  }
});

test("allowed: public addresses", (t) => {
  for (const address of ["93.184.216.34", "8.8.8.8", "172.32.0.1", "192.169.0.1", "2606:4700::1111", "::ffff:8.8.8.8"]) {
    t.is(strict.refusalOf(address), undefined, address);
  }
});

test("the operator's networks are allowed, nothing more", (t) => {
  const policy = addressPolicy(parseAllowedNetworks("127.0.0.1/32, 10.20.0.0/16 fd00:1::/64"));
  t.is(policy.refusalOf("127.0.0.1"), undefined);
  t.regex(policy.refusalOf("127.0.0.2") ?? "", /loopback/);
  t.is(policy.refusalOf("10.20.3.4"), undefined);
  t.regex(policy.refusalOf("10.21.0.1") ?? "", /private/);
  t.is(policy.refusalOf("fd00:1::5"), undefined);
  t.regex(policy.refusalOf("fd00:2::5") ?? "", /private/);
  t.is(policy.refusalOf("::ffff:127.0.0.1"), undefined);
  t.throws(() => parseAllowedNetworks("10.0.0.0/33"));
  t.throws(() => parseAllowedNetworks("example.com/8"));
  t.deepEqual(parseAllowedNetworks(""), []);
});

test("URLs at registration: scheme, credentials, literal addresses and local names", (t) => {
  t.is(urlProblem("https://hooks.example.com/x", strict), undefined);
  t.is(urlProblem("http://93.184.216.34:8080/x", strict), undefined);
  t.regex(urlProblem("ftp://example.com/", strict) ?? "", /http or https/);
  t.regex(urlProblem("not a url", strict) ?? "", /no URL/);
  t.regex(urlProblem("https://user:pw@example.com/", strict) ?? "", /credentials/);
  t.regex(urlProblem("http://[::1]:80/", strict) ?? "", /loopback/);
  t.regex(urlProblem("http://169.254.169.254/latest", strict) ?? "", /link-local/);
  t.regex(urlProblem("http://localhost:3000/", strict) ?? "", /this machine/);
  t.regex(urlProblem("http://a.b.localhost/", strict) ?? "", /this machine/);
  t.regex(urlProblem("http://metadata.google.internal/", strict) ?? "", /metadata/);
  // A name is checked again at each delivery, after resolution: it passes here.
  t.is(urlProblem("http://ip6-localhost.example/", strict), undefined);
  t.is(urlProblem("http://localhost:3000/", addressPolicy(["127.0.0.1/32"])), undefined);
});
