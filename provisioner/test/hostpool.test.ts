import test from "ava";
import { HostListError, parseHostEntry, parseHostList } from "@corral/shared";
import { readHostpoolSettings, sshAuthOf } from "@corral/provisioner/testing";
import { taskMessage } from "./helpers.js";

/** The `hosts` field of the hostpool provider: parsing and the settings read from a task, without NATS. */

test("hosts - user, address and port; the host id is address:port", (t) => {
  t.deepEqual(parseHostEntry("10.0.0.5"), { address: "10.0.0.5", port: 22, host: "10.0.0.5:22" });
  t.deepEqual(parseHostEntry("ubuntu@10.0.0.5:2222"), { user: "ubuntu", address: "10.0.0.5", port: 2222, host: "10.0.0.5:2222" });
  t.deepEqual(parseHostEntry(" node-1.example.com "), { address: "node-1.example.com", port: 22, host: "node-1.example.com:22" });
  t.deepEqual(parseHostEntry("deploy_user@db.internal:22"), { user: "deploy_user", address: "db.internal", port: 22, host: "db.internal:22" });
});

test("hosts - IPv6 in brackets with or without a port, or bare without one", (t) => {
  t.deepEqual(parseHostEntry("[fd00::5]:2200"), { address: "fd00::5", port: 2200, host: "[fd00::5]:2200" });
  t.deepEqual(parseHostEntry("root@[::1]"), { user: "root", address: "::1", port: 22, host: "[::1]:22" });
  t.deepEqual(parseHostEntry("fe80::1"), { address: "fe80::1", port: 22, host: "[fe80::1]:22" });
});

test("hosts - a bad entry is refused with a message naming it", (t) => {
  const bad: Array<[string, RegExp]> = [
    ["10.0.0.5:0", /invalid port "0"/],
    ["10.0.0.5:65536", /invalid port "65536"/],
    ["10.0.0.5:ssh", /invalid port "ssh"/],
    ["10.0.0.5:", /invalid port ""/],
    ["[fd00::5:22", /no closing \]/],
    ["[fd00::5]22", /"22" after the address/],
    ["[10.0.0.5]:22", /not an IPv6 address/],
    ["fd00::5::22", /not an address/],
    ["bad host", /invalid address/],
    ["under_score.example.com", /invalid address/],
    ["999.1.2.3", /invalid address/],
    ["-dash.example.com", /invalid address/],
    ["@10.0.0.5", /invalid user ""/],
    ["a b@10.0.0.5", /invalid user/],
  ];
  for (const [entry, message] of bad) {
    const err = t.throws(() => parseHostEntry(entry), { instanceOf: HostListError }, entry);
    t.regex(err?.message ?? "", message, entry);
    t.true(err?.message.includes(`"${entry.trim()}"`), `${entry}: ${err?.message}`);
  }
});

test("hosts - a list is comma (or whitespace) separated; each host at most once", (t) => {
  t.deepEqual(
    parseHostList("10.0.0.1, admin@10.0.0.2:2222,\n[fd00::3] ,, h4.example.com").map((h) => h.host),
    ["10.0.0.1:22", "10.0.0.2:2222", "[fd00::3]:22", "h4.example.com:22"],
  );
  t.deepEqual(parseHostList(" , "), []);
  t.throws(() => parseHostList("10.0.0.1, root@10.0.0.1:22"), { message: /"10.0.0.1:22" is listed twice/ });
  t.throws(() => parseHostList("10.0.0.1, 10.0.0.2:99999"), { message: /"10.0.0.2:99999" has an invalid port/ });
});

const provider = (fields: Record<string, string>) => ({ name: "pool", providertype: "hostpool", provisioner: fields });

test("settings - hosts and a credential are required; a bad entry fails with a status-1 message naming it", (t) => {
  const read = (fields: Record<string, string>) => readHostpoolSettings(taskMessage({ tenant: "t", config: { provider: provider(fields) } }));
  const bad = read({ hosts: "10.0.0.1, 10.0.0.2:x", ssh_password: "p" });
  t.false(bad.ok);
  t.regex(!bad.ok ? bad.error : "", /^hostpool pool: hosts entry "10.0.0.2:x" has an invalid port/);
  const none = read({ hosts: " ", ssh_password: "p" });
  t.regex(!none.ok ? none.error : "", /lists no host/);
  const noCredential = read({ hosts: "10.0.0.1" });
  t.regex(!noCredential.ok ? noCredential.error : "", /set ssh_key_resource or ssh_password/);
  const ok = read({ hosts: "10.0.0.1", ssh_key_resource: "k", cleanup: " reboot " });
  t.true(ok.ok);
  if (ok.ok) t.deepEqual({ ...ok.settings, hosts: ok.settings.hosts.length }, { provider: "pool", hosts: 1, keyResource: "k", cleanup: "reboot" });
});

test("settings - ssh-auth: the entry's user, else sshuser, else root; a key resource, else the password field", (t) => {
  const withKey = { provider: "pool", hosts: [], keyResource: "k" };
  const withPassword = { provider: "pool", hosts: [] };
  t.deepEqual(sshAuthOf(parseHostEntry("ops@10.0.0.1:2222"), withKey, "ubuntu"), { user: "ops", port: 2222, key_resource: "k" });
  t.deepEqual(sshAuthOf(parseHostEntry("10.0.0.1"), withPassword, "ubuntu"), { user: "ubuntu", port: 22, password_field: "ssh_password" });
  t.deepEqual(sshAuthOf(parseHostEntry("10.0.0.1"), withPassword, undefined), { user: "root", port: 22, password_field: "ssh_password" });
});
