"""gpu_infra_oss: `gpu-infra-api oss-get` (GRID fleets only): one object of the stack's
bucket over the region's internal endpoint, signed with the node role's credentials (OSS
signature version 1). Python 3.6+ standard library."""

import base64
import email.utils
import hashlib
import hmac
import urllib.parse
import urllib.request
from typing import Dict


def oss_get(cfg: Dict[str, str], creds: Dict[str, str], bucket: str, key: str,
            target: str) -> None:
    """Download oss://`bucket`/`key` to `target`."""
    date = email.utils.formatdate(usegmt=True)
    token = creds["SecurityToken"]
    to_sign = f"GET\n\n\n{date}\nx-oss-security-token:{token}\n/{bucket}/{key}"
    signature = base64.b64encode(hmac.new(creds["AccessKeySecret"].encode(),
                                          to_sign.encode(), hashlib.sha1).digest()).decode()
    request = urllib.request.Request(
        f"https://{bucket}.oss-{cfg['REGION']}-internal.aliyuncs.com/"
        f"{urllib.parse.quote(key)}",
        headers={"Date": date, "x-oss-security-token": token,
                 "Authorization": f"OSS {creds['AccessKeyId']}:{signature}"})
    with urllib.request.urlopen(request, timeout=60) as answer, open(target, "wb") as out:
        for chunk in iter(lambda: answer.read(1 << 20), b""):
            out.write(chunk)
