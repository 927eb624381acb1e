/** The signature is what the Standard Webhooks library checks, byte for byte. */
import test from "ava";
import { Webhook } from "standardwebhooks";
import { generateSecret, signedHeaders } from "@corral/webhooks/testing";

test("a generated secret signs what standardwebhooks verifies; a changed body or secret fails", (t) => {
  const secret = generateSecret();
  t.regex(secret, /^whsec_[A-Za-z0-9+/]{43}=$/);
  const body = JSON.stringify({ type: "cluster.status", data: { text: "é \u2028 ✓" } });
  const now = Math.floor(Date.now() / 1000);
  const headers = signedHeaders(secret, "msg_1", now, body);
  t.deepEqual(new Webhook(secret).verify(body, headers), JSON.parse(body));
  t.throws(() => new Webhook(secret).verify(body + " ", headers));
  t.throws(() => new Webhook(generateSecret()).verify(body, headers));
  t.throws(() => new Webhook(secret).verify(body, signedHeaders(secret, "msg_1", now - 3600, body)), undefined, "an old timestamp");
});

test("the specification's own example", (t) => {
  // From the Standard Webhooks specification's test vectors.
  const headers = signedHeaders("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", "msg_p5jXN8AQM9LWM0D4loKWxJek", 1614265330, '{"test": 2432232314}');
  t.is(headers["webhook-signature"], "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=");
});
