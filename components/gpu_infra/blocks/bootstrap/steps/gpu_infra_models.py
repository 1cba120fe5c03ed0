"""gpu_infra_models: `gpu-infra-api model-get PREFIX CACHE` (inference fleets with a model
only; the bucket: config MODELS_BUCKET), with the API's `oss_get` passed in. The model's
files come from the stack's models bucket under PREFIX, as its SHA256SUMS manifest
(`sha256sum` output) lists them; each is checked against its digest in a staging directory
under CACHE, which becomes CACHE/<the manifest's sha256> only once every file has passed: a
partial or corrupt download is never that directory. Prints the directory. A model already
there is not fetched again; the other models in CACHE (older versions, leftover staging) are
removed. Python 3.6+ standard library; types in comments."""

import hashlib
import os
import re
import shutil
import tempfile
import typing  # noqa: F401 (the type comments)

MANIFEST = "SHA256SUMS"
LINE = re.compile(r"^([0-9a-f]{64}) [ *](.+)$")


def entries(text, where):
    # type: (str, str) -> typing.List[typing.Tuple[str, str]]
    """(sha256, relative path) of each line of the manifest; one line and exit 1 for a line
    that is not `<sha256>  <path>` or a path that leaves the model's directory."""
    found = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        match = LINE.match(line)
        path = match.group(2) if match else ""
        path = path[2:] if path.startswith("./") else path
        parts = path.split("/")
        if not match or path.startswith("/") or {"", ".", ".."} & set(parts):
            raise SystemExit("gpu-infra-api: %s line %d: not `<sha256>  <relative path>`"
                             % (where, number))
        found.append((match.group(1), path))
    if not found:
        raise SystemExit("gpu-infra-api: %s lists no file" % where)
    return found


def sha256_of(path):
    # type: (str) -> str
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def model_get(cfg, oss_get, bucket, prefix, cache):
    # type: (typing.Dict[str, str], typing.Callable[..., None], str, str, str) -> None
    """Fetch and check the model under `prefix` into `cache`; print its directory."""
    os.makedirs(cache, exist_ok=True)
    staging = tempfile.mkdtemp(prefix=".partial-", dir=cache)
    try:
        manifest = os.path.join(staging, MANIFEST)
        oss_get(cfg, bucket, "%s/%s" % (prefix, MANIFEST), manifest)
        final = os.path.join(cache, sha256_of(manifest))
        for name in os.listdir(cache):
            if os.path.join(cache, name) not in (staging, final):
                shutil.rmtree(os.path.join(cache, name), ignore_errors=True)
        if not os.path.isdir(final):
            where = "oss://%s/%s/%s" % (bucket, prefix, MANIFEST)
            with open(manifest, encoding="utf-8", errors="replace") as handle:
                files = entries(handle.read(), where)
            tree = os.path.join(staging, "model")
            for sha256, path in files:
                target = os.path.join(tree, path)
                os.makedirs(os.path.dirname(target), exist_ok=True)
                oss_get(cfg, bucket, "%s/%s" % (prefix, path), target)
                if sha256_of(target) != sha256:
                    raise SystemExit("gpu-infra-api: oss://%s/%s/%s does not match its sha256 "
                                     "in %s (corrupt, or replaced after the manifest was made)"
                                     % (bucket, prefix, path, MANIFEST))
            os.rename(tree, final)
        print(final)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
