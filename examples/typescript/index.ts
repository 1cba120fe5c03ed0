// A training cluster and an inference fleet from a TypeScript program, through the gpu-infra
// component provider. `pulumi package add ../../provider` generates the SDK this imports
// (its declarations are in sdk/index.d.ts, which the tests type-check this file against).
import * as gpuinfra from "@pulumi/gpu-infra";

const tags = { CostCenter: "cc-42", Owner: "ml-platform" };

const training = new gpuinfra.TrainingCluster("llm", {
    name: "llm",
    region: "cn-hangzhou",
    tags,
    network: { vpcCidr: "10.50.0.0/16", zones: ["cn-hangzhou-i"] },
    fleet: { instanceType: "ecs.gn7i-c32g1.8xlarge", nodes: 4, capacity: "on_demand" },
    monthlyBudgetCny: 60000,
});

const serving = new gpuinfra.GpuScalingGroup("chat-gpu", {
    region: "cn-hangzhou",
    fleet: { instanceTypes: ["ecs.gn7i-c8g1.2xlarge"], minSize: 1, maxSize: 6 },
    vswitchIds: [training.vswitchIds.apply(ids => ids["cn-hangzhou-i"])],
    securityGroupIds: [training.securityGroupId],
    imageId: "ubuntu_22_04_x64_20G_alibase_20250101.vhd",
    tags,
});

export const nodeIps = training.nodePrivateIps;
export const scalingGroupId = serving.scalingGroupId;
