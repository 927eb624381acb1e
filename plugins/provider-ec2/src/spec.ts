import type { PluginField, PluginSpec } from "@corral/provisioner/sdk";

export const EC2_PROVIDER_TYPE = "ec2";

const field = (label: string, tip: string, extra: Partial<PluginField> = {}): PluginField => ({ label, type: "text", override: false, tip, ...extra });

/**
 * The `ec2` provider's fields. A hardware type's `flavor` is the instance type (`t3.micro`), an image type's `image`
 * the AMI id (`ami-0123456789abcdef0`).
 */
export const EC2_SPEC: PluginSpec = {
  name: EC2_PROVIDER_TYPE,
  description: "Instances of AWS EC2 or an EC2-compatible cloud as nodes (flavor: instance type, image: AMI id), reached over SSH",
  parameters: {
    admin: {
      fields: {
        region: field("Region", "AWS region of the instances, for example us-east-1"),
        endpoint: field("Endpoint", "EC2 API URL of an EC2-compatible cloud (default: AWS's endpoint of the region)"),
        access_key_id: field("Access key id", "Access key of the account (default: the AWS SDK's credential chain of the provisioner)", {
          sensitive: true,
        }),
        secret_access_key: field("Secret access key", "Secret of the access key", { type: "password", sensitive: true }),
        subnet_id: field("Subnet", "Subnet the instances are launched in (default: the default VPC's subnet of the region)"),
        security_group_ids: field("Security groups", "Comma-separated security group ids; they must let the provisioners reach port 22"),
        ssh_user: field(
          "SSH user",
          "User the AMI lets in with the instance's key pair, with passwordless sudo, unless the image type names its sshuser (default admin, Debian's)",
        ),
        associate_public_ip: field("Public IP", "Give each instance a public IPv4 address (default: the subnet's setting)", {
          options: ["", "true", "false"],
        }),
        trust_host_key_on_first_use: field(
          "Trust host key on first use",
          "Accept the host key an instance presents when its console shows none (off: CONFIRM waits for the keys cloud-init prints)",
          { options: ["false", "true"], default: "false" },
        ),
      },
      required: [["region"]],
    },
    user: {
      fields: {
        key_name: field("Your key pair", "Name of an EC2 key pair of the account: its public key is let in on every node too, so you can log in"),
      },
      required: [],
    },
  },
};
