"""gpu-infra policy rules: plain functions shared by the CrossGuard pack (policies/ run by
`pulumi preview --policy-pack policies`), the offline plan and the tests."""
