"""pulumi-alicloud 4.0 type tokens, one constant per token (from the SDK's @pulumi.type_token;
tests/test_type_tokens.py checks each against the SDK and that no other module spells one)."""

# vpc
VPC = "alicloud:vpc/network:Network"
VSWITCH = "alicloud:vpc/switch:Switch"
NAT_GATEWAY = "alicloud:vpc/natGateway:NatGateway"
SNAT_ENTRY = "alicloud:vpc/snatEntry:SnatEntry"

# ecs
INSTANCE = "alicloud:ecs/instance:Instance"
ECS_DISK = "alicloud:ecs/ecsDisk:EcsDisk"
DISK = "alicloud:ecs/disk:Disk"
"""The older disk resource, still in the SDK beside ecs.EcsDisk."""
DISKS = (ECS_DISK, DISK)
ECS_DISK_ATTACHMENT = "alicloud:ecs/ecsDiskAttachment:EcsDiskAttachment"
ECS_LAUNCH_TEMPLATE = "alicloud:ecs/ecsLaunchTemplate:EcsLaunchTemplate"
LAUNCH_TEMPLATE = "alicloud:ecs/launchTemplate:LaunchTemplate"
SECURITY_GROUP = "alicloud:ecs/securityGroup:SecurityGroup"
MANAGED_KUBERNETES = "alicloud:cs/managedKubernetes:ManagedKubernetes"
KUBERNETES_ADDON = "alicloud:cs/kubernetesAddon:KubernetesAddon"
REGISTRY_EE_INSTANCE = "alicloud:cr/registryEnterpriseInstance:RegistryEnterpriseInstance"
REGISTRY_EE_NAMESPACE = "alicloud:cs/registryEnterpriseNamespace:RegistryEnterpriseNamespace"
REGISTRY_EE_REPO = "alicloud:cs/registryEnterpriseRepo:RegistryEnterpriseRepo"
REGISTRY_VPC_ENDPOINT = "alicloud:cr/vpcEndpointLinkedVpc:VpcEndpointLinkedVpc"
REGISTRY_NAMESPACE = "alicloud:cr/namespace:Namespace"
"""A namespace of the ACR personal edition."""
REGISTRY_REPO = "alicloud:cr/repo:Repo"
"""A repository of the ACR personal edition."""
REGISTRY_NAMESPACES = (REGISTRY_EE_NAMESPACE, REGISTRY_NAMESPACE)
REGISTRY_REPOS = (REGISTRY_EE_REPO, REGISTRY_REPO)
LOG_PROJECT = "alicloud:log/project:Project"
LOG_STORE = "alicloud:log/store:Store"
K8S_PROVIDER = "pulumi:providers:kubernetes"
K8S_STORAGE_CLASS = "kubernetes:storage.k8s.io/v1:StorageClass"
K8S_PERSISTENT_VOLUME = "kubernetes:core/v1:PersistentVolume"
K8S_PERSISTENT_VOLUME_CLAIM = "kubernetes:core/v1:PersistentVolumeClaim"
K8S_NAMESPACE = "kubernetes:core/v1:Namespace"
SECURITY_GROUP_RULE = "alicloud:ecs/securityGroupRule:SecurityGroupRule"
EIP_ADDRESS = "alicloud:ecs/eipAddress:EipAddress"
EIP_ASSOCIATION = "alicloud:ecs/eipAssociation:EipAssociation"
KEY_PAIR = "alicloud:ecs/ecsKeyPair:EcsKeyPair"
DEPLOYMENT_SET = "alicloud:ecs/ecsDeploymentSet:EcsDeploymentSet"
AUTO_SNAPSHOT_POLICY = "alicloud:ecs/autoSnapshotPolicy:AutoSnapshotPolicy"
ECS_RAM_ROLE_ATTACHMENT = "alicloud:ecs/ramRoleAttachment:RamRoleAttachment"
SNAPSHOT_POLICY_ATTACHMENT = (
    "alicloud:ecs/ecsAutoSnapshotPolicyAttachment:EcsAutoSnapshotPolicyAttachment")
RESERVED_INSTANCE = "alicloud:ecs/reservedInstance:ReservedInstance"
ELASTICITY_ASSURANCE = "alicloud:ecs/elasticityAssurance:ElasticityAssurance"
CAPACITY_RESERVATION = "alicloud:ecs/capacityReservation:CapacityReservation"
RESERVATIONS = frozenset({RESERVED_INSTANCE, ELASTICITY_ASSURANCE, CAPACITY_RESERVATION})
"""Capacity bought ahead for `instanceAmount` instances of one `instanceType`, paid whether
the fleet uses it or not."""
IMAGE_PIPELINE_EXECUTION = "alicloud:ecs/imagePipelineExecution:ImagePipelineExecution"
ECS_INVOCATION = "alicloud:ecs/ecsInvocation:EcsInvocation"

# ess
SCALING_GROUP = "alicloud:ess/scalingGroup:ScalingGroup"
SCALING_CONFIGURATION = "alicloud:ess/scalingConfiguration:ScalingConfiguration"
SCALING_RULE = "alicloud:ess/scalingRule:ScalingRule"
ESS_ALARM = "alicloud:ess/alarm:Alarm"
LIFECYCLE_HOOK = "alicloud:ess/lifecycleHook:LifecycleHook"
ESS_NOTIFICATION = "alicloud:ess/notification:Notification"
SERVER_GROUP_ATTACHMENT = "alicloud:ess/serverGroupAttachment:ServerGroupAttachment"
INSTANCE_REFRESH = "alicloud:ess/instanceRefresh:InstanceRefresh"
SCHEDULED_TASK = "alicloud:ess/scheduledTask:ScheduledTask"
CAPACITY_RESERVATION = "alicloud:ecs/capacityReservation:CapacityReservation"
ELASTICITY_ASSURANCE = "alicloud:ecs/elasticityAssurance:ElasticityAssurance"

# oss
BUCKET = "alicloud:oss/bucket:Bucket"
BUCKET_ACL = "alicloud:oss/bucketAcl:BucketAcl"
BUCKET_PUBLIC_ACCESS_BLOCK = "alicloud:oss/bucketPublicAccessBlock:BucketPublicAccessBlock"
BUCKET_ENCRYPTION = "alicloud:oss/bucketServerSideEncryption:BucketServerSideEncryption"
BUCKET_VERSIONING = "alicloud:oss/bucketVersioning:BucketVersioning"
BUCKET_LOGGING = "alicloud:oss/bucketLogging:BucketLogging"
BUCKET_POLICY = "alicloud:oss/bucketPolicy:BucketPolicy"
BUCKET_OBJECT = "alicloud:oss/bucketObject:BucketObject"

# nas
NAS_FILE_SYSTEM = "alicloud:nas/fileSystem:FileSystem"
NAS_ACCESS_RULE = "alicloud:nas/accessRule:AccessRule"
NAS_ACCESS_GROUP = "alicloud:nas/accessGroup:AccessGroup"
NAS_MOUNT_TARGET = "alicloud:nas/mountTarget:MountTarget"
NAS_PROTOCOL_SERVICE = "alicloud:nas/protocolService:ProtocolService"
NAS_PROTOCOL_MOUNT_TARGET = "alicloud:nas/protocolMountTarget:ProtocolMountTarget"

# kms, ram, message
KMS_KEY = "alicloud:kms/key:Key"
RAM_POLICY = "alicloud:ram/policy:Policy"
RAM_ROLE = "alicloud:ram/role:Role"
RAM_ACCESS_KEY = "alicloud:ram/accessKey:AccessKey"
RAM_ROLE_POLICY_ATTACHMENT = "alicloud:ram/rolePolicyAttachment:RolePolicyAttachment"
RAM_USER_POLICY_ATTACHMENT = "alicloud:ram/userPolicyAttachment:UserPolicyAttachment"
RAM_GROUP_POLICY_ATTACHMENT = "alicloud:ram/groupPolicyAttachment:GroupPolicyAttachment"
RAM_POLICY_ATTACHMENTS = (RAM_ROLE_POLICY_ATTACHMENT, RAM_USER_POLICY_ATTACHMENT,
                          RAM_GROUP_POLICY_ATTACHMENT)
MNS_QUEUE = "alicloud:message/serviceQueue:ServiceQueue"

# cms, cloudmonitor
CMS_ALARM = "alicloud:cms/alarm:Alarm"
CMS_GROUP_METRIC_RULE = "alicloud:cms/groupMetricRule:GroupMetricRule"
CMS_MONITOR_GROUP = "alicloud:cms/monitorGroup:MonitorGroup"
CMS_MONITOR_GROUP_INSTANCES = "alicloud:cms/monitorGroupInstances:MonitorGroupInstances"
CMS_DYNAMIC_TAG_GROUP = "alicloud:cms/dynamicTagGroup:DynamicTagGroup"
CMS_METRIC_RULE_TEMPLATE = "alicloud:cms/metricRuleTemplate:MetricRuleTemplate"
CMS_SLS_GROUP = "alicloud:cms/slsGroup:SlsGroup"
CMS_NAMESPACE = "alicloud:cms/namespace:Namespace"
CMS_HYBRID_SLS_TASK = "alicloud:cms/hybridMonitorSlsTask:HybridMonitorSlsTask"
ALARM_CONTACT = "alicloud:cms/alarmContact:AlarmContact"
ALARM_CONTACT_GROUP = "alicloud:cms/alarmContactGroup:AlarmContactGroup"
EVENT_RULE = "alicloud:cms/eventRule:EventRule"
SERVICE_METRIC_ALARM_RULE = (
    "alicloud:cloudmonitor/serviceMetricAlarmRule:ServiceMetricAlarmRule")

# load balancers
ALB_LOAD_BALANCER = "alicloud:alb/loadBalancer:LoadBalancer"
NLB_LOAD_BALANCER = "alicloud:nlb/loadBalancer:LoadBalancer"
SLB_LOAD_BALANCER = "alicloud:slb/loadBalancer:LoadBalancer"
LOAD_BALANCERS = (ALB_LOAD_BALANCER, NLB_LOAD_BALANCER, SLB_LOAD_BALANCER)
ALB_SERVER_GROUP = "alicloud:alb/serverGroup:ServerGroup"
NLB_SERVER_GROUP = "alicloud:nlb/serverGroup:ServerGroup"
ALB_LISTENER = "alicloud:alb/listener:Listener"
NLB_LISTENER = "alicloud:nlb/listener:Listener"
SLB_LISTENER = "alicloud:slb/listener:Listener"
HBR_VAULT = "alicloud:hbr/vault:Vault"
HBR_POLICY = "alicloud:hbr/policy:Policy"
HBR_POLICY_BINDING = "alicloud:hbr/policyBinding:PolicyBinding"
SLS_MACHINE_GROUP = "alicloud:log/machineGroup:MachineGroup"
SLS_PIPELINE_CONFIG = "alicloud:sls/logtailPipelineConfig:LogtailPipelineConfig"
SLS_ATTACHMENT = "alicloud:log/logTailAttachment:LogTailAttachment"
SLS_STORE_INDEX = "alicloud:log/storeIndex:StoreIndex"
ALB_SECURITY_GROUP_ATTACHMENT = (
    "alicloud:alb/loadBalancerSecurityGroupAttachment:LoadBalancerSecurityGroupAttachment")
LOAD_BALANCER_ADDRESS_KEYS = {ALB_LOAD_BALANCER: "addressType",
                              NLB_LOAD_BALANCER: "addressType",
                              SLB_LOAD_BALANCER: "addressType"}
"""Load balancers and the input saying Internet or Intranet (case differs per product)."""
LISTENER_PORT_KEYS = {ALB_LISTENER: "listenerPort", NLB_LISTENER: "listenerPort",
                      SLB_LISTENER: "frontendPort"}
"""Load balancer listeners and the input holding their public port."""

# resourcemanager
RESOURCE_GROUP = "alicloud:resourcemanager/resourceGroup:ResourceGroup"

# cs (ACK)
NODE_POOL = "alicloud:cs/nodePool:NodePool"

# data sources (invoke tokens)
GET_ZONES = "alicloud:index/getZones:getZones"
GET_REGIONS = "alicloud:index/getRegions:getRegions"
GET_CALLER_IDENTITY = "alicloud:index/getCallerIdentity:getCallerIdentity"
GET_SWITCHES = "alicloud:vpc/getSwitches:getSwitches"
GET_NETWORKS = "alicloud:vpc/getNetworks:getNetworks"
GET_IMAGES = "alicloud:ecs/getImages:getImages"
GET_CLUSTER_CREDENTIAL = "alicloud:cs/getClusterCredential:getClusterCredential"
GET_KUBERNETES_ADDONS = "alicloud:cs/getKubernetesAddons:getKubernetesAddons"

TAGGABLE = frozenset({
    INSTANCE, ECS_DISK, DISK, SECURITY_GROUP, KEY_PAIR, ECS_LAUNCH_TEMPLATE,
    SCALING_GROUP, SCALING_CONFIGURATION, VPC, VSWITCH, NAT_GATEWAY, EIP_ADDRESS, BUCKET,
    NAS_FILE_SYSTEM, KMS_KEY, CMS_ALARM, CMS_MONITOR_GROUP, ALB_LOAD_BALANCER,
    NLB_LOAD_BALANCER, ALB_SERVER_GROUP, NLB_SERVER_GROUP, RAM_ROLE, RAM_POLICY, NODE_POOL,
    RESOURCE_GROUP, MANAGED_KUBERNETES, REGISTRY_EE_INSTANCE, LOG_PROJECT, HBR_VAULT,
})
"""Types whose pulumi-alicloud 4.0 resource takes `tags` (checked by a test against the SDK)."""

DATA_KINDS: dict[str, str] = {BUCKET: "bucket", NAS_FILE_SYSTEM: "file system",
                              **{disk: "kept disk" for disk in DISKS},
                              LOG_PROJECT: "log project", LOG_STORE: "log store",
                              HBR_VAULT: "backup vault"}
"""Resources that hold data, by what a report calls one: protected in prod (the
prod-data-protected rule), and replacing or deleting one loses its data (the change report's
replaces-data). A disk only when it outlives its instance (deleteWithInstance false); a log
project holds its stores and their logs, a backup vault every backup in it."""
DATA_TYPES = frozenset(DATA_KINDS)
"""Resources that hold data (DATA_KINDS): protected in prod."""

# Network exposure beyond security groups (pulumi-alicloud 4.0 SDK tokens).
PREFIX_LIST = "alicloud:ecs/ecsPrefixList:EcsPrefixList"
NLB_SERVER_ATTACHMENT = "alicloud:nlb/serverGroupServerAttachment:ServerGroupServerAttachment"
SLB_ACL = "alicloud:slb/acl:Acl"
SLB_ACL_ENTRY = "alicloud:slb/aclEntryAttachment:AclEntryAttachment"
ALB_ACL = "alicloud:alb/acl:Acl"
ALB_ACL_ENTRY = "alicloud:alb/aclEntryAttachment:AclEntryAttachment"
FORWARD_ENTRY = "alicloud:vpc/forwardEntry:ForwardEntry"
ROUTE_ENTRY = "alicloud:vpc/routeEntry:RouteEntry"
PEER_CONNECTION = "alicloud:vpc/peerConnection:PeerConnection"
CEN_INSTANCE_GRANT = "alicloud:cen/instanceGrant:InstanceGrant"
CEN_INSTANCE_ATTACHMENT = "alicloud:cen/instanceAttachment:InstanceAttachment"
RDS_INSTANCE = "alicloud:rds/instance:Instance"
RDS_CONNECTION = "alicloud:rds/connection:Connection"
POLARDB_CLUSTER = "alicloud:polardb/cluster:Cluster"
KVSTORE_INSTANCE = "alicloud:kvstore/instance:Instance"
MONGODB_INSTANCE = "alicloud:mongodb/instance:Instance"
MONGODB_SHARDING = "alicloud:mongodb/shardingInstance:ShardingInstance"
ELASTICSEARCH = "alicloud:elasticsearch/instance:Instance"
CR_ENDPOINT_ACL = "alicloud:cr/endpointAclPolicy:EndpointAclPolicy"
K8S_SERVICE = "kubernetes:core/v1:Service"

COMPONENT_PACKAGE = "gpu-infra"
"""The package of gpu-infra's own component resources (gpu-infra:network:Network, ...):
groupings, not cloud resources."""

# Transport, identity, data, audit, Kubernetes and registries (pulumi-alicloud 4.0 SDK
# tokens; pulumi-kubernetes 4 tokens for the Kubernetes objects).
API_GATEWAY_API = "alicloud:apigateway/api:Api"
ALB_SECURITY_POLICY = "alicloud:alb/securityPolicy:SecurityPolicy"
NLB_SECURITY_POLICY = "alicloud:nlb/securityPolicy:SecurityPolicy"
SLB_TLS_POLICY = "alicloud:slb/tlsCipherPolicy:TlsCipherPolicy"
BUCKET_HTTPS_CONFIG = "alicloud:oss/bucketHttpsConfig:BucketHttpsConfig"
VPN_CONNECTION = "alicloud:vpn/connection:Connection"
SSL_VPN_SERVER = "alicloud:vpn/sslVpnServer:SslVpnServer"
POLARDB_ENDPOINT = "alicloud:polardb/endpoint:Endpoint"
IMAGE_COMPONENT = "alicloud:ecs/ecsImageComponent:EcsImageComponent"
IMAGE_PIPELINE = "alicloud:ecs/ecsImagePipeline:EcsImagePipeline"
IMAGE_SHARE = "alicloud:ecs/imageSharePermission:ImageSharePermission"
ECS_COMMAND = "alicloud:ecs/command:Command"
OOS_TEMPLATE = "alicloud:oos/template:Template"
OOS_PARAMETER = "alicloud:oos/parameter:Parameter"
OOS_SECRET_PARAMETER = "alicloud:oos/secretParameter:SecretParameter"
TLS_PRIVATE_KEY = "tls:index/privateKey:PrivateKey"
"""pulumi-tls: a key the stack generates (its private half is a secret in the state)."""
FC_FUNCTION = "alicloud:fc/v3Function:V3Function"
FC_TRIGGER = "alicloud:fc/v3Trigger:V3Trigger"
KMS_SECRET = "alicloud:kms/secret:Secret"
LOG_AUDIT = "alicloud:log/audit:Audit"
ACTIONTRAIL_TRAIL = "alicloud:actiontrail/trail:Trail"
FLOW_LOG = "alicloud:vpc/flowLog:FlowLog"
ACCOUNT_PUBLIC_ACCESS_BLOCK = "alicloud:oss/accountPublicAccessBlock:AccountPublicAccessBlock"
BUCKET_WEBSITE = "alicloud:oss/bucketWebsite:BucketWebsite"
BUCKET_CORS = "alicloud:oss/bucketCors:BucketCors"
RAM_LOGIN_PROFILE = "alicloud:ram/loginProfile:LoginProfile"
RAM_SECURITY_PREFERENCE = "alicloud:ram/securityPreference:SecurityPreference"
RAM_PASSWORD_POLICY = "alicloud:ram/passwordPolicy:PasswordPolicy"
RAM_PASSWORD_POLICIES = frozenset({"alicloud:ram/accountPasswordPolicy:AccountPasswordPolicy",
                                   RAM_PASSWORD_POLICY})
ACK_DEDICATED = "alicloud:cs/kubernetes:Kubernetes"
ACK_SERVERLESS = "alicloud:cs/serverlessKubernetes:ServerlessKubernetes"
CR_CHART_NAMESPACE = "alicloud:cr/chartNamespace:ChartNamespace"
CR_CHART_REPOSITORY = "alicloud:cr/chartRepository:ChartRepository"
K8S_POD = "kubernetes:core/v1:Pod"
K8S_CONFIG_MAP = "kubernetes:core/v1:ConfigMap"
K8S_DEPLOYMENT = "kubernetes:apps/v1:Deployment"
K8S_DAEMON_SET = "kubernetes:apps/v1:DaemonSet"
K8S_STATEFUL_SET = "kubernetes:apps/v1:StatefulSet"
K8S_REPLICA_SET = "kubernetes:apps/v1:ReplicaSet"
K8S_JOB = "kubernetes:batch/v1:Job"
K8S_CRON_JOB = "kubernetes:batch/v1:CronJob"
K8S_CLUSTER_ROLE = "kubernetes:rbac.authorization.k8s.io/v1:ClusterRole"
K8S_ROLE = "kubernetes:rbac.authorization.k8s.io/v1:Role"
K8S_CLUSTER_ROLE_BINDING = "kubernetes:rbac.authorization.k8s.io/v1:ClusterRoleBinding"
K8S_ROLE_BINDING = "kubernetes:rbac.authorization.k8s.io/v1:RoleBinding"
K8S_SECRET = "kubernetes:core/v1:Secret"
K8S_SERVICE_ACCOUNT = "kubernetes:core/v1:ServiceAccount"
K8S_CRD = "kubernetes:apiextensions.k8s.io/v1:CustomResourceDefinition"
K8S_VALIDATING_WEBHOOK = (
    "kubernetes:admissionregistration.k8s.io/v1:ValidatingWebhookConfiguration")
K8S_HPA = "kubernetes:autoscaling/v2:HorizontalPodAutoscaler"
K8S_NETWORK_POLICY = "kubernetes:networking.k8s.io/v1:NetworkPolicy"
ECS_INSTANCE_SET = "alicloud:ecs/ecsInstanceSet:EcsInstanceSet"
ECI_CONTAINER_GROUP = "alicloud:eci/containerGroup:ContainerGroup"
ESS_ECI_SCALING_CONFIGURATION = "alicloud:ess/eciScalingConfiguration:EciScalingConfiguration"
K8S_POD_TEMPLATE = "kubernetes:core/v1:PodTemplate"
K8S_REPLICATION_CONTROLLER = "kubernetes:core/v1:ReplicationController"
K8S_CUSTOM_WORKLOADS = (
    "kubernetes:kubeflow.org/v1:PyTorchJob", "kubernetes:kubeflow.org/v1:TFJob",
    "kubernetes:kubeflow.org/v1:MPIJob", "kubernetes:kubeflow.org/v2beta1:MPIJob",
    "kubernetes:kubeflow.org/v1:XGBoostJob", "kubernetes:kubeflow.org/v1:PaddleJob",
    "kubernetes:kubeflow.org/v1:JAXJob", "kubernetes:trainer.kubeflow.org/v1alpha1:TrainJob",
    "kubernetes:trainer.kubeflow.org/v1alpha1:TrainingRuntime",
    "kubernetes:trainer.kubeflow.org/v1alpha1:ClusterTrainingRuntime",
    "kubernetes:ray.io/v1:RayCluster", "kubernetes:ray.io/v1:RayJob",
    "kubernetes:ray.io/v1:RayService", "kubernetes:batch.volcano.sh/v1alpha1:Job",
    "kubernetes:jobset.x-k8s.io/v1alpha2:JobSet",
    "kubernetes:leaderworkerset.x-k8s.io/v1:LeaderWorkerSet",
    "kubernetes:serving.kserve.io/v1beta1:InferenceService",
    "kubernetes:argoproj.io/v1alpha1:Workflow", "kubernetes:argoproj.io/v1alpha1:CronWorkflow",
    "kubernetes:argoproj.io/v1alpha1:WorkflowTemplate")
"""Custom resources of the job, training and serving operators a GPU cluster runs that carry
pod templates (Kubeflow training operator v1 and Trainer v2, KubeRay, Volcano, JobSet,
LeaderWorkerSet, KServe, Argo Workflows): pulumi-kubernetes registers a custom resource as
`kubernetes:<group>/<version>:<Kind>`."""
NETWORK_INTERFACE = "alicloud:ecs/ecsNetworkInterface:EcsNetworkInterface"
NETWORK_INTERFACE_ATTACHMENT = (
    "alicloud:ecs/ecsNetworkInterfaceAttachment:EcsNetworkInterfaceAttachment")
KMS_ALIAS = "alicloud:kms/alias:Alias"
RAM_GROUP = "alicloud:ram/group:Group"
RAM_GROUP_MEMBERSHIP = "alicloud:ram/groupMembership:GroupMembership"
RAM_ROLE_ATTACHMENT = "alicloud:ram/roleAttachment:RoleAttachment"
RAM_USER = "alicloud:ram/user:User"
RAM_USER_GROUP_ATTACHMENT = "alicloud:ram/userGroupAttachment:UserGroupAttachment"
VPC_ROUTE_TABLE = "alicloud:vpc/routeTable:RouteTable"
VPC_ROUTE_TABLE_ATTACHMENT = "alicloud:vpc/routeTableAttachment:RouteTableAttachment"
STACK_REFERENCE = "pulumi:pulumi:StackReference"
"""A read of another stack's outputs (fleet.image.from_stack)."""
