"""Makes the Kubernetes JSON schemas shipped by PyPI `kubernetes-validate` usable offline.

    python k8s-schemas.py SOURCE_DIR TARGET_DIR VERSION...

Its schemas carry `$id: https://kubernetes.io/api/...` and refer to `/api/_definitions.json`,
which a validator resolves against kubernetes.io, i.e. over the network. The copies written
here have no `$id` and refer to the `_definitions.json` beside them, so kubeconform resolves
every reference from disk. Only the `vX.Y.Z-local-strict` folders (no unknown fields) are copied.
"""

import json
import os
import sys


def convert(source: str, target: str) -> None:
    os.makedirs(target, exist_ok=True)
    for name in os.listdir(source):
        if not name.endswith(".json"):
            continue
        with open(os.path.join(source, name), encoding="utf-8") as f:
            text = f.read()
        schema = json.loads(text.replace('"/api/_definitions.json#', '"_definitions.json#'))
        schema.pop("$id", None)
        with open(os.path.join(target, name), "w", encoding="utf-8") as f:
            json.dump(schema, f)


def main() -> None:
    if len(sys.argv) < 4:
        sys.exit("usage: k8s-schemas.py SOURCE_DIR TARGET_DIR VERSION...")
    source, target, versions = sys.argv[1], sys.argv[2], sys.argv[3:]
    for version in versions:
        folder = f"v{version.lstrip('v')}-local-strict"
        if not os.path.isdir(os.path.join(source, folder)):
            sys.exit(f"kubernetes-validate has no schemas for Kubernetes {version} ({folder})")
        convert(os.path.join(source, folder), os.path.join(target, folder))


if __name__ == "__main__":
    main()
