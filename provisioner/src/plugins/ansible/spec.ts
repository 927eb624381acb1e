import type { PluginSpec } from "../../sdk.js";

const field = (label: string, tip: string) => ({ label, override: false, type: "text", tip });

export const ANSIBLE_SPEC: PluginSpec = {
  name: "ansible",
  description: "Runs an Ansible playbook against the node for each service action (ansible-playbook on the provisioner host, over SSH)",
  resourceTypes: {
    playbooks: { format: "archive" },
    roles: { format: "archive" },
    collections: { format: "archive" },
  },
  parameters: {
    admin: {
      fields: {
        playbook: field("Playbook", "Path of the playbook inside the synced playbooks: <archive name>/<file>, for example web/site.yml"),
        tags: field("Tags", "Only run plays and tasks tagged with these (comma separated)"),
        skip_tags: field("Skip tags", "Skip plays and tasks tagged with these (comma separated)"),
        extra_vars: field("Extra variables", "A JSON object of extra variables for the play"),
        become: field("Become", "Run the play's tasks as root with sudo: true (default) or false"),
        timeout_s: field("Timeout (seconds)", "The play is killed and the action fails past this many seconds (default 1800)"),
        hosts: field(
          "Hosts",
          "node (default): the play runs on the task's node; service: one play over every node of the service in this step, for serial or run_once",
        ),
      },
      required: [["playbook"]],
    },
  },
};
