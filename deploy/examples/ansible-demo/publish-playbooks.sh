#!/bin/sh
# publish-playbooks.sh: uploads deploy/examples/ansible-demo/playbooks/demo as the ansible automator's playbooks
# archive `demo`, stages that version and syncs it to the provisioners (docs/providers.md, "Ansible").
#   CORRAL_API     the API, with its version segment (default http://localhost:55054/v2, npm start's)
#   CORRAL_USER    an admin of the tenant (default admin)
#   CORRAL_TENANT  the tenant (default superadmin)
set -eu
here=$(cd "$(dirname "$0")" && pwd)
api=${CORRAL_API:-http://localhost:55054/v2}
user=${CORRAL_USER:-admin}
tenant=${CORRAL_TENANT:-superadmin}
resource=$api/plugins/automatortypes/ansible/playbooks/demo
archive=$(mktemp)
trap 'rm -f "$archive"' EXIT

# An archive resource unpacks to one directory named as the resource: demo/.
tar -czf "$archive" -C "$here/playbooks" demo
answer=$(curl -sS --fail-with-body -H "Service-UserID: $user" -H "Service-TenantID: $tenant" -H "Content-Type: application/octet-stream" --data-binary @"$archive" "$resource")
version=$(printf '%s' "$answer" | sed -n 's/.*"version":\([0-9]*\).*/\1/p')
[ -n "$version" ] || { echo "upload answered: $answer" >&2; exit 1; }
curl -sS --fail-with-body -o /dev/null -X POST -H "Service-UserID: $user" -H "Service-TenantID: $tenant" "$resource/versions/$version/stage"
curl -sS --fail-with-body -o /dev/null -X POST -H "Service-UserID: $user" -H "Service-TenantID: $tenant" "$api/plugins/sync"
echo "playbooks demo version $version staged and synced"
