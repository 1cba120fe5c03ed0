"""Read-only calls to the user's Alibaba Cloud account, for `gpu-infra preflight` and live
prices: the credential chain (credentials), request signatures (signing) and a small client
(client). Standard library only: see docs/operations/preflight.md for why no Alibaba SDK.
"""
