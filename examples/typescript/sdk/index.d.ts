// TypeScript declarations of the gpu-infra component provider (GENERATED from its schema by
// gpu_infra_provider.typescript; do not edit): what `pulumi package add` gives a program.
import * as pulumi from "@pulumi/pulumi";

/**
 * The ACK Pro cluster: control plane, system pool, add-ons, registry.
 */
export interface AckConfig {
    /**
     * Add-on name -> version, overriding the pinned one (gpu_infra_facts.ack.ADDONS).
     * Default none.
     */
    addonVersions?: {[key: string]: string};
    /**
     * ACK Pro tier: ack.pro.small, or the provisioned control planes ack.pro.xlarge and
     * ack.pro.2xlarge for large clusters. Default ack.pro.small.
     * One of: ack.pro.small, ack.pro.xlarge, ack.pro.2xlarge.
     */
    clusterSpec?: string;
    /**
     * API server, controller and scheduler logs and the audit log to SLS. Default: the
     * environment's profile (on in prod).
     */
    controlPlaneLogs?: boolean;
    /**
     * Node OS of every pool: AliyunLinux3ContainerOptimized, AliyunLinux3 or Ubuntu.
     * Default AliyunLinux3ContainerOptimized.
     * One of: AliyunLinux3ContainerOptimized, AliyunLinux3, Ubuntu.
     */
    imageType?: string;
    /**
     * ACK Kubernetes version, `1.<minor>.<patch>-aliyun.<n>` with a minor ACK creates
     * clusters with (1.33, 1.34, 1.35), e.g. 1.34.1-aliyun.1. Required: a version left to ACK
     * changes with the day of creation. Raising it upgrades the control plane in place (ACK
     * never downgrades); node pools follow in their own upgrade.
     */
    kubernetesVersion: string;
    /**
     * When ACK maintains managed components. Default Sunday 18:00 UTC for 4 hours.
     */
    maintenanceWindow?: MaintenanceWindow;
    /**
     * kube-proxy mode, ipvs or iptables. Default ipvs.
     * One of: ipvs, iptables.
     */
    proxyMode?: string;
    /**
     * Give the API server an internet endpoint. Default false: reachable from the VPC only
     * (kubectl through a VPN, CEN or a bastion). Refused in prod.
     */
    publicApi?: boolean;
    /**
     * Deprecated spelling of the top-level `registry` (the same fields), still read when
     * that is not set. Default none.
     */
    registry?: RegistryConfig;
    /**
     * Cluster IPs of Services; may not overlap the VPC. Default 172.21.0.0/20.
     */
    serviceCidr?: string;
    /**
     * The CPU pool for add-ons and controllers. Default 2 x 4 vCPU.
     */
    systemPool?: SystemPoolConfig;
}

/**
 * Cloud Backup (HBR) of the stack's data: one vault, one daily policy, bound to the
 * shared file system (general-purpose or Extreme NAS) and to the listed buckets.
 */
export interface BackupConfig {
    /**
     * Buckets backed up too: datasets and/or models (when the stack has them). Default
     * none: the shared file system only.
     */
    buckets?: string[];
    /**
     * Back up. Default: the environment's profile (on in prod).
     */
    enabled?: boolean;
    /**
     * Hour (UTC) of the daily backup. Default 18 (02:00 in China Standard Time).
     */
    hourUtc?: number;
    /**
     * Days each backup is kept. Default 30.
     */
    retentionDays?: number;
    /**
     * The key the vault encrypts backups with: `stack` (the stack's KMS key, which needs
     * `security.kms_encryption`) or `hbr` (Cloud Backup's own key, what a vault made by an
     * unreleased main before 0.2.0's vault key has). Fixed at creation: changing it replaces
     * the vault, and every backup in it goes. Default: `stack` where the stack has a KMS key
     * (prod), else `hbr`.
     * One of: stack, hbr.
     */
    vaultKey?: string;
}

/**
 * Private, encrypted OSS buckets, one per purpose.
 */
export interface BucketsConfig {
    /**
     * Start of every bucket name (`<prefix>-<purpose>`). Bucket names are global across
     * all accounts, so set one that is yours (e.g. an org name). Default
     * `<cluster name>-<environment>`.
     */
    bucketPrefix?: string;
    /**
     * Expected GiB per purpose and storage class, for the cost estimate. Default none.
     */
    expectedGib?: {[key: string]: {[key: string]: number}};
    /**
     * Storage tiers and multipart cleanup. Default IA at 30 days, Archive at 90.
     */
    lifecycle?: LifecycleConfig;
    /**
     * Write access logs to a `<prefix>-logs` bucket (versioned in prod). Default: on in
     * prod, off elsewhere.
     */
    logging?: boolean;
    /**
     * Which buckets, each listed once. Default: the layout's `default_bucket_purposes`
     * (training datasets, checkpoints, models, outputs; inference models; rendering datasets,
     * outputs). Checkpoints and models are always versioned. An ECS fleet needs at least one:
     * its nodes fetch their node tools from it (`node-tools-without-bucket`).
     */
    purposes?: string[];
}

/**
 * Guaranteed stock of a scarce GPU type in the fleet's first zone.
 */
export interface CapacityGuarantee {
    /**
     * Instances guaranteed. Required.
     */
    count: number;
    /**
     * elasticity_assurance (ecs.ElasticityAssurance, paid upfront for a term) or
     * capacity_reservation (ecs.CapacityReservation, billed pay-as-you-go until released).
     * Default capacity_reservation.
     * One of: elasticity_assurance, capacity_reservation.
     */
    kind?: string;
    /**
     * Term of an elasticity assurance, in months: 1-9, 12, 24, 36, 48 or 60 (whole years
     * are bought as years). Default 1; unused for reservations.
     */
    periodMonths?: number;
}

/**
 * Someone who receives alerts: an email address and/or a DingTalk robot webhook.
 */
export interface Contact {
    /**
     * DingTalk robot webhook URL (https://...); keep it a secret in the stack file
     * (`secure:`). Default none.
     */
    dingtalkWebhook?: string;
    /**
     * Email address (the recipient must confirm it). Default none.
     */
    email?: string;
    /**
     * Short name, 2-12 lowercase letters, digits, hyphens. Required.
     */
    name: string;
}

/**
 * Host CPU saturated (data loading starves the GPUs).
 */
export interface CpuAlarm {
    /**
     * Create this alarm. Default true.
     */
    enabled?: boolean;
    /**
     * critical, warn or info. Default warn.
     * One of: critical, warn, info.
     */
    level?: string;
    /**
     * Aggregation period in seconds: 60, 300, 900 or 3600. Default 300.
     */
    period?: number;
    /**
     * Average, Minimum or Maximum over the period. Default Average.
     * One of: Average, Minimum, Maximum.
     */
    statistics?: string;
    /**
     * Fires at or above this host CPU utilisation (%). Default 90.
     */
    threshold?: number;
    /**
     * Consecutive periods over the threshold before the alarm fires. Default 3.
     */
    times?: number;
}

/**
 * One ESSD AutoPL (cloud_auto) data disk on every node.
 */
export interface DataDiskConfig {
    /**
     * Performance burst (up to min{1,000,000, 1000 x GiB} IOPS). Default true.
     */
    bursting?: boolean;
    /**
     * Data worth keeping: the disk outlives its instance and, in prod, gets the
     * auto-snapshot policy and protection. Default false (scratch).
     */
    keep?: boolean;
    /**
     * Disk name, unique per node. Default scratch.
     */
    name?: string;
    /**
     * `node`: size_gib is the disk size; `gpu`: size_gib times the node's GPU count.
     * Default node.
     * One of: node, gpu.
     */
    per?: string;
    /**
     * IOPS provisioned above the baseline. Default 0 (none). Allowed from 4 GiB, up to
     * min{1000 x GiB - baseline, 50000}; with per=gpu, checked here at one GPU's size.
     */
    provisionedIops?: number;
    /**
     * Size in GiB, per node or per GPU (see `per`). Default 500; 1 to 65536 in all.
     */
    sizeGib?: number;
}

/**
 * One GPU instance type the catalog does not list, described by the stack.
 */
export interface DeclaredInstanceType {
    /**
     * An ECS Bare Metal type. Default false.
     */
    bareMetal?: boolean;
    /**
     * Supports eRDMA (network_interface_traffic_mode HighPerformance). Default false.
     */
    erdma?: boolean;
    /**
     * Instance family, e.g. `gn9x`. Default: read from the type name (`ecs.gn9x-8x.48xlarge`
     * -> `gn9x`); it picks the pinned driver like a catalog family.
     */
    family?: string;
    /**
     * Physical GPUs per instance (1-64). Required.
     */
    gpuCount: number;
    /**
     * GPU memory per GPU in GiB. Required.
     */
    gpuMemoryGib: number;
    /**
     * GPU model, e.g. `NVIDIA H20`. Required.
     */
    gpuModel: string;
    /**
     * LowLatency deployment sets support the family. Default false.
     */
    lowLatency?: boolean;
    /**
     * Memory per instance in GiB. Required.
     */
    memoryGib: number;
    /**
     * GPUs are linked by NVLink. Default false.
     */
    nvlink?: boolean;
    /**
     * NVSwitch on the board: the nodes run the NVIDIA fabric manager. Default false.
     */
    nvswitch?: boolean;
    /**
     * On-demand price in CNY per hour in the stack's region, for the cost estimate.
     * Default: unknown (the estimate counts the instances as unpriced).
     */
    priceCnyPerHour?: number;
    /**
     * Regions that offer it; the `not-offered-in-region` warning checks the stack's region
     * against them. Default: unknown (not checked).
     */
    regions?: string[];
    /**
     * What it serves: training, inference, rendering, vgpu. Default: the stack's layout.
     */
    uses?: string[];
    /**
     * vCPUs per instance. Required.
     */
    vcpu: number;
}

/**
 * System disk nearly full.
 */
export interface DiskAlarm {
    /**
     * Device of the system disk's root partition. Default /dev/vda1.
     */
    device?: string;
    /**
     * Create this alarm. Default true.
     */
    enabled?: boolean;
    /**
     * critical, warn or info. Default warn.
     * One of: critical, warn, info.
     */
    level?: string;
    /**
     * Aggregation period in seconds: 60, 300, 900 or 3600. Default 300.
     */
    period?: number;
    /**
     * Average, Minimum or Maximum over the period. Default Average.
     * One of: Average, Minimum, Maximum.
     */
    statistics?: string;
    /**
     * Fires at or above this system disk usage (%). Default 85.
     */
    threshold?: number;
    /**
     * Consecutive periods over the threshold before the alarm fires. Default 3.
     */
    times?: number;
}

/**
 * How the NVIDIA driver gets onto the nodes, pinned to exact versions.
 *
 * Routes: `auto_install` runs Alibaba's first-boot auto-install (driver, CUDA, cuDNN from
 * the intranet mirror; 10-20 minutes and a reboot); `preinstalled` expects an image that
 * carries them (the baked image, a Marketplace image) and only checks the version; `grid`
 * installs the GRID driver of vws graphics families from `grid_package`. `auto` is
 * auto_install on Tesla families and nothing on vws families (ERROR driver-route-missing:
 * set grid or preinstalled).
 */
export interface DriverConfig {
    /**
     * CUDA toolkit version the auto-install installs. Default: the family's pin.
     */
    cuda?: string;
    /**
     * cuDNN version the auto-install installs. Default: the family's pin.
     */
    cudnn?: string;
    /**
     * The GRID driver package (.run) for vws families, as oss://<bucket>/<key>: in one of
     * the stack's buckets (the nodes' role reads those; their names end in the stack's global
     * suffix), or anywhere with grid_package_grant. Required with grid.
     */
    gridPackage?: string;
    /**
     * grid_package lies outside the stack's buckets: grant the nodes' role read
     * (oss:GetObject) on that one object. The nodes read it over the stack region's internal
     * OSS endpoint with the role's credentials, so the bucket must be in the stack's region and
     * in its account (or its owner's bucket policy must allow the role). Default false:
     * grid_package must be in one of the stack's buckets, which the role reads already.
     */
    gridPackageGrant?: boolean;
    /**
     * SHA256 of grid_package, checked on the node. Default none (not checked).
     */
    gridPackageSha256?: string;
    /**
     * auto, auto_install, preinstalled or grid. Default auto.
     * One of: auto, auto_install, preinstalled, grid.
     */
    route?: string;
    /**
     * Driver version the health check requires (e.g. 550.127.08). Default: the family's pin
     * (gpu_infra_facts.node_stack); required with grid.
     */
    version?: string;
}

/**
 * ECS system events sent to the contacts (event-triggered alert rules).
 */
export interface EventsConfig {
    /**
     * ECS fleets: alert when a node's GPU health check finds a fault after boot (the
     * custom metric GPU_HEALTH_METRIC of gpu_infra_facts.cloudmonitor: XID or ECC errors, a
     * GPU off the bus, a driver that does not answer, eRDMA down). Default true.
     */
    gpuHealth?: boolean;
    /**
     * Alert on host and instance failures (restart, redeploy, stop). Default true.
     */
    instanceFailure?: boolean;
    /**
     * Scaling fleets: alert on scale-out and scale-in activities that fail, partly succeed
     * (a new node whose bootstrap failed abandons its readiness action and is released) or
     * are rejected. Default true.
     */
    scalingFailure?: boolean;
    /**
     * Alert on spot reclaim notices (about 5 minutes before release). Default true.
     */
    spotInterruption?: boolean;
}

/**
 * The metric alarms applied to every GPU fleet (namespace acs_ecs_dashboard; the GPU,
 * memory and disk metrics need the CloudMonitor agent on the nodes).
 */
export interface FleetAlarmsConfig {
    /**
     * Host CPU high. Default on: >= 90% for 3 x 5 min, warn.
     */
    cpu?: CpuAlarm;
    /**
     * GPU utilisation low for long. Default on: below 10% (max) for 8 x 15 min, info.
     */
    gpuIdle?: GpuIdleAlarm;
    /**
     * GPU memory utilisation high. Default on: >= 95% for 3 x 5 min, warn.
     */
    gpuMemory?: GpuMemoryAlarm;
    /**
     * GPU temperature high. Default on: >= 85 C (max) for 3 x 5 min, critical.
     */
    gpuTemperature?: GpuTemperatureAlarm;
    /**
     * Host memory high. Default on: >= 90% for 3 x 5 min, warn.
     */
    memory?: MemoryAlarm;
    /**
     * System disk usage high. Default on: >= 85% for 3 x 5 min, warn.
     */
    systemDisk?: DiskAlarm;
}

/**
 * GPUs idle for a long time: they cost money doing nothing.
 */
export interface GpuIdleAlarm {
    /**
     * Create this alarm. Default true.
     */
    enabled?: boolean;
    /**
     * Default info.
     * One of: critical, warn, info.
     */
    level?: string;
    /**
     * Default 900 s.
     */
    period?: number;
    /**
     * Default Maximum: even the busiest moment of each period was idle.
     * One of: Average, Minimum, Maximum.
     */
    statistics?: string;
    /**
     * Fires when GPU utilisation (%) stays below this. Default 10.
     */
    threshold?: number;
    /**
     * Default 8 (2 hours at the default period).
     */
    times?: number;
}

/**
 * GPU memory nearly full (out-of-memory risk).
 */
export interface GpuMemoryAlarm {
    /**
     * Create this alarm. Default true.
     */
    enabled?: boolean;
    /**
     * critical, warn or info. Default warn.
     * One of: critical, warn, info.
     */
    level?: string;
    /**
     * Aggregation period in seconds: 60, 300, 900 or 3600. Default 300.
     */
    period?: number;
    /**
     * Average, Minimum or Maximum over the period. Default Average.
     * One of: Average, Minimum, Maximum.
     */
    statistics?: string;
    /**
     * Fires at or above this GPU memory utilisation (%). Default 95.
     */
    threshold?: number;
    /**
     * Consecutive periods over the threshold before the alarm fires. Default 3.
     */
    times?: number;
}

/**
 * Scaling on the fleet's average GPU utilisation: an ess.Alarm on the system metric
 * GpuUtilizationAgent (what the CloudMonitor agent on every node reports; ESS target
 * tracking does not offer a GPU metric) at or above `scale_out_at` percent for
 * `evaluation_count` periods grows the fleet by `grow_percent` of its capacity (at least
 * one instance); at or below `scale_in_at` for `scale_in_evaluation_count` periods it
 * shrinks by `shrink_percent` (at least one), never past min_size or max_size.
 */
export interface GpuScaling {
    /**
     * Periods in a row at or above scale_out_at before the fleet grows. Default 3.
     */
    evaluationCount?: number;
    /**
     * Percent of the capacity added per firing (at least one instance). Default 25.
     */
    growPercent?: number;
    /**
     * Alarm period. Default 60.
     */
    periodSeconds?: number;
    /**
     * Average GPU utilisation (percent) at or below which it shrinks. Default 30; must be
     * below scale_out_at.
     */
    scaleInAt?: number;
    /**
     * Periods in a row at or below scale_in_at before it shrinks. Default 15 (longer than
     * scale-out: hysteresis).
     */
    scaleInEvaluationCount?: number;
    /**
     * Average GPU utilisation (percent) at or above which the fleet grows. Default 70.
     */
    scaleOutAt?: number;
    /**
     * Percent of the capacity removed per firing (at least one instance). Default 10.
     */
    shrinkPercent?: number;
    /**
     * Seconds a new instance needs before it counts (driver, model load). Default 600.
     */
    warmupSeconds?: number;
}

/**
 * GPUs running hot (throttling, hardware wear).
 */
export interface GpuTemperatureAlarm {
    /**
     * Create this alarm. Default true.
     */
    enabled?: boolean;
    /**
     * Default critical.
     * One of: critical, warn, info.
     */
    level?: string;
    /**
     * Aggregation period in seconds: 60, 300, 900 or 3600. Default 300.
     */
    period?: number;
    /**
     * Default Maximum.
     * One of: Average, Minimum, Maximum.
     */
    statistics?: string;
    /**
     * Fires at or above this GPU temperature in degrees C (30-110). Default 85.
     */
    threshold?: number;
    /**
     * Consecutive periods over the threshold before the alarm fires. Default 3.
     */
    times?: number;
}

/**
 * What the baked image holds and how it is built. The build runs the same install steps
 * as a booting node (driver, CUDA and cuDNN by Alibaba's auto-install, eRDMA, fabric
 * manager, CloudMonitor agent) on an intermediate GPU instance in the stack's vSwitch, then
 * Image Builder snapshots it. Fleets then set `fleet.image.name` (or id) to the built image
 * and `fleet.driver.route: preinstalled` with the same driver version.
 */
export interface ImageBuildConfig {
    /**
     * The image the build starts from. Default: the pinned public Ubuntu 22.04 image (the
     * same default as the fleets), never "the newest".
     */
    base?: ImageChoice;
    /**
     * Other regions the built image is copied to. Default none.
     */
    copyToRegions?: string[];
    /**
     * Release the build instance when the build fails. Default true (false keeps it for
     * debugging: it runs, and bills, until you release it).
     */
    deleteInstanceOnFailure?: boolean;
    /**
     * Driver, CUDA and cuDNN versions to install. Default: the family's pins. Route auto or
     * auto_install only (GRID packages of vws families are not baked: their fleets use route
     * grid).
     */
    driver?: DriverConfig;
    /**
     * Bake the eRDMA driver: auto (where the build type's family has eRDMA), on or off. The
     * build instance needs no eRDMA interface (the image gets the driver, the nodes configure
     * it at boot), so `on` bakes it for eRDMA fleets of another family, e.g. an ebmgn7ex
     * fleet's image built on gn7e. Default auto.
     * One of: auto, on, off.
     */
    erdma?: string;
    /**
     * Prefix of the built image's name (2-64 characters, a letter first). Default
     * `<name>-img-<digest of the content and these settings>`: a changed install (versions,
     * steps) gets a new prefix, a new image template and a new build; running fleets keep their
     * image until their stack file names the new one.
     */
    imageNamePrefix?: string;
    /**
     * GPU instance type of the intermediate build instance, of the family the image is for
     * (the driver install needs the GPU; its family picks the driver pin and eRDMA). Pick the
     * family's smallest type, e.g. ecs.gn7e-c16g1.4xlarge for A100 fleets. Required.
     */
    instanceType: string;
    /**
     * Alibaba Cloud account ids (16 digits) the built image is shared with. Default none.
     */
    shareWithAccounts?: string[];
    /**
     * System disk of the build instance, and so of the image, in GiB (20-500). Default 60:
     * the driver, CUDA and cuDNN need about 15 GiB beyond the 20 GiB base image.
     */
    systemDiskGib?: number;
}

/**
 * The image every node of the fleet boots. Set `id`, `name` or `from_stack`, or none for
 * the pinned default public image of `os`. With `id`, `name` or the default, the image only
 * changes when this section changes (no "newest image" lookup), since a new image replaces
 * each node's system disk; with `from_stack` it changes when that image stack publishes a
 * new bake (deliberately: the point of baking).
 */
export interface ImageChoice {
    /**
     * The image stack (layout: image) of this project whose baked image the fleet boots, by
     * its stack name (e.g. image-a100): its output `image_id`, read through a stack reference
     * at `pulumi up`; offline a placeholder that changes with that stack's bake. Only a build
     * whose checks all passed makes an image, so a failed bake never becomes a fleet's image.
     * Boot it with `driver.route: preinstalled`. Default none.
     */
    fromStack?: string;
    /**
     * An image id: a public one (ubuntu_22_04_x64_20G_alibase_20250917.vhd) or a custom,
     * shared or Marketplace one (m-...). Default none.
     */
    id?: string;
    /**
     * The exact name of one of your custom images (e.g. the baked image's), looked up at each
     * run; ERROR at plan time if no or several images have it. Default none.
     */
    name?: string;
    /**
     * The image's operating system: ubuntu_22_04 or alinux_3. Without id and name it picks
     * the pinned public image (gpu_infra_facts.node_stack.DEFAULT_IMAGES). Default ubuntu_22_04.
     * One of: ubuntu_22_04, alinux_3.
     */
    os?: string;
}

/**
 * Days after upload at which objects of the tiered buckets move to colder storage
 * classes (the access-log bucket always tiers); every bucket aborts stale multipart
 * uploads and expires old versions.
 */
export interface LifecycleConfig {
    /**
     * Abort multipart uploads left incomplete this many days. Default 7.
     */
    abortMultipartDays?: number;
    /**
     * Move to Archive after this many days. Default 90; null: never.
     */
    archiveDays?: number;
    /**
     * Move to ColdArchive after this many days. Default null (never).
     */
    coldArchiveDays?: number;
    /**
     * Move to IA (Infrequent Access) after this many days. Default 30; null: never.
     */
    iaDays?: number;
    /**
     * In versioned buckets, delete an object's old versions this many days after they are
     * overwritten or deleted (bounds what versioning costs). Default 30.
     */
    noncurrentVersionDays?: number;
    /**
     * Buckets whose objects move to IA/Archive/ColdArchive. Default checkpoints and
     * outputs; datasets and models stay Standard (reading Archive needs a restore first).
     */
    tieredPurposes?: string[];
}

/**
 * TLS on the load balancer's listeners: an NLB listens TCPSSL, an ALB HTTPS, with the
 * certificate and TLS policy given; the fleet behind still gets plain TCP/HTTP.
 */
export interface ListenerTls {
    /**
     * The server certificate's id in Certificate Management Service (e.g.
     * 12345678-cn-hangzhou). Required.
     */
    certificateId: string;
    /**
     * The listener's TLS security policy. Default tls_cipher_policy_1_2_strict_with_1_3
     * (TLS 1.2 and 1.3, strong ciphers); the provider's default would be
     * tls_cipher_policy_1_0.
     * One of: tls_cipher_policy_1_0, tls_cipher_policy_1_1, tls_cipher_policy_1_2,
     * tls_cipher_policy_1_2_strict, tls_cipher_policy_1_2_strict_with_1_3.
     */
    policy?: string;
}

/**
 * A load balancer across the fleet's zones, one listener per `security.service_ports`,
 * reachable only from `security.client_cidrs`.
 */
export interface LoadBalancerConfig {
    /**
     * ALB only: write the load balancer's access logs to an `alb-access` store of the
     * stack's log project (`logs`). Default: where the environment keeps access logs (prod,
     * whose `prod-access-logs` policy rule demands them), else off.
     */
    accessLogs?: boolean;
    /**
     * HTTP path checked on each backend, e.g. /v2/health/ready: 1-80 URL characters
     * starting with `/`. Default none: a TCP connect check on the service port.
     */
    healthCheckPath?: string;
    /**
     * Give the load balancer a public address. Default false (intranet only). Public
     * listeners need `tls` to pass the policy pack's tls-on-public-listeners rule.
     */
    internetFacing?: boolean;
    /**
     * nlb (TCP, Network Load Balancer) or alb (HTTP, Application Load Balancer).
     * Default nlb.
     * One of: nlb, alb.
     */
    kind?: string;
    /**
     * Terminate TLS on every listener with this certificate. Default none (plain TCP for an
     * NLB, HTTP for an ALB).
     */
    tls?: ListenerTls;
}

/**
 * Where the nodes' logs go: an SLS project of the stack with a `bootstrap` store (the
 * bootstrap log) and a `system` store (the systemd journal, kernel messages included),
 * shipped by LoongCollector on every node.
 */
export interface LogsConfig {
    /**
     * Create the project and ship the nodes' logs. Default true.
     */
    enabled?: boolean;
    /**
     * Days the stores keep logs (1-3650; 3650 keeps them forever). Default: the
     * environment's profile (7 in dev and staging, 180 in prod).
     */
    retentionDays?: number;
}

/**
 * When ACK may upgrade managed components and patch nodes (never the Kubernetes minor:
 * auto-upgrade stays off, the version is the stack's `ack.kubernetes_version`).
 */
export interface MaintenanceWindow {
    /**
     * Days of the week. Default [Sunday].
     */
    days?: string[];
    /**
     * Length in hours, 1-24. Default 4.
     */
    hours?: number;
    /**
     * Start, UTC `hh:mm`. Default 18:00 (02:00 the next day in China).
     */
    startUtc?: string;
}

/**
 * Host memory nearly full.
 */
export interface MemoryAlarm {
    /**
     * Create this alarm. Default true.
     */
    enabled?: boolean;
    /**
     * critical, warn or info. Default warn.
     * One of: critical, warn, info.
     */
    level?: string;
    /**
     * Aggregation period in seconds: 60, 300, 900 or 3600. Default 300.
     */
    period?: number;
    /**
     * Average, Minimum or Maximum over the period. Default Average.
     * One of: Average, Minimum, Maximum.
     */
    statistics?: string;
    /**
     * Fires at or above this host memory utilisation (%). Default 90.
     */
    threshold?: number;
    /**
     * Consecutive periods over the threshold before the alarm fires. Default 3.
     */
    times?: number;
}

/**
 * CloudMonitor alerting: who is told, and about what.
 */
export interface MonitoringConfig {
    /**
     * Metric alarms per GPU fleet. Default: all on.
     */
    alarms?: FleetAlarmsConfig;
    /**
     * Who receives alerts (one contact group). Default none.
     */
    contacts?: Contact[];
    /**
     * Hours in which alarms notify, hh:mm-hh:mm. Default 00:00-23:59.
     */
    effectiveInterval?: string;
    /**
     * Create the contacts, alarms and event rules. Default: on when `contacts` are
     * listed.
     */
    enabled?: boolean;
    /**
     * Event alerts. Default: spot interruption, instance failure and scaling failure on.
     */
    events?: EventsConfig;
    /**
     * Seconds before a firing alarm notifies again (300-86400). Default 86400.
     */
    silenceTime?: number;
    /**
     * Extra https:// URL that receives the event alerts (spot, failures); may be a secret
     * (`secure:`). Default none.
     */
    webhook?: string;
}

/**
 * Names that must be unique across a region, an account or all of Alibaba Cloud.
 */
export interface NamingConfig {
    /**
     * What ends every such name (`<name>-<suffix>`). `none` (default): no suffix, the
     * names a stack has always had (`<cluster>-<environment>-<purpose>` buckets,
     * `<cluster>-node-role`), so an existing stack keeps its buckets and role. `auto`: 8 hex
     * digits hashed from the stack name, region and cluster name, so two stacks that differ in
     * any of them never collide (what `gpu-infra clone` writes). Or a literal of 3-8 lowercase
     * letters and digits, e.g. to keep an `auto` suffix through a stack rename. Changing it on
     * a running stack renames, so REPLACES, its buckets (their data), role and the rest.
     */
    globalSuffix?: string;
}

/**
 * VPC layout. vSwitch CIDRs are derived from each zone's letter, so adding a zone
 * never renumbers the vSwitches that exist. With `pod_vswitches` (ACK's Terway) the VPC is
 * split in two halves: node vSwitches take their letter slots in the lower half, pod
 * vSwitches theirs in the upper half, so the two can never overlap.
 */
export interface NetworkConfig {
    /**
     * Zones of `alicloud:region` the gpu-infra zone list (gpu_infra_facts/zones.json) does
     * not have yet, e.g. one opened since it was checked: `zones` may then use them. Default
     * none: every zone must be a listed one.
     */
    declaredZones?: string[];
    /**
     * Bring your own VPC: its id (vpc-...). Default none (a VPC is created). `vpc_cidr`
     * is then required and states the existing VPC's CIDR (or the part of it the stack
     * uses); it scopes security and NAS rules.
     */
    existingVpcId?: string;
    /**
     * Bring your own vSwitches: zone -> vsw-... id, one per zone of `zones`. Default none.
     * Required with `existing_vpc_id`, not allowed without it.
     */
    existingVswitchIds?: {[key: string]: string};
    /**
     * Record the VPC's traffic (vpc.FlowLog, all traffic) into a `vpc-flow` store of the
     * stack's log project (`logs`). Default false: SLS bills flow logs per GB written, and a GPU
     * stack moves terabytes of data through its VPC (the `prod-vpc-flow-logs` policy rule is
     * advisory for that reason).
     */
    flowLogs?: boolean;
    /**
     * Peak bandwidth of the NAT gateway's EIP in Mbit/s (pay by traffic). Default 200;
     * 1 to 200.
     */
    natBandwidthMbps?: number;
    /**
     * Create a NAT gateway, an EIP and SNAT entries so nodes without public IPs reach the
     * internet (images, packages, datasets). Default: true for a VPC the stack creates, false
     * with `existing_vpc_id` (a VPC you bring usually has its own egress; set true to add a
     * NAT gateway to it anyway).
     */
    natGateway?: boolean;
    /**
     * Explicit pod vSwitch CIDR per zone, overriding the derived slot. Default none.
     */
    podVswitchCidrs?: {[key: string]: string};
    /**
     * Prefix length of each pod vSwitch. Default: the node vSwitches' one.
     */
    podVswitchPrefix?: number;
    /**
     * Give each zone a second vSwitch for pod IPs (Terway). Default: true with
     * `platform: ack` (which needs them), false otherwise (which has no pods).
     */
    podVswitches?: boolean;
    /**
     * VPC CIDR block. Default 10.0.0.0/16 for a VPC the stack creates; prefix /8 to /24.
     * Required with `existing_vpc_id`: the existing VPC's CIDR (checked against the VPC's
     * CIDR blocks when the program looks the VPC up).
     */
    vpcCidr?: string;
    /**
     * Explicit vSwitch CIDR per zone, overriding the derived slot. Default none.
     */
    vswitchCidrs?: {[key: string]: string};
    /**
     * Prefix length of each vSwitch. Default: the VPC prefix + 5 (e.g. /21 in a /16).
     */
    vswitchPrefix?: number;
    /**
     * Zones that get a vSwitch, e.g. [cn-hangzhou-i]. Required; each must be a zone of
     * `alicloud:region`. Training clusters use one zone; inference fleets at least two.
     */
    zones: string[];
}

/**
 * Scaling on a custom CloudMonitor metric: the backlog of the fleet's work queue (pending
 * requests, or render jobs queued plus running), published every minute with
 * `gpu-infra publish-queue-metric` (or PutCustomMetric) under the `fleet` dimension.
 *
 * Scale-out: an ess.Alarm at or above `scale_out_threshold` for `evaluation_count`
 * periods runs a StepScalingRule whose steps grow with the backlog (sized by
 * `jobs_per_instance`, or `steps`). Scale-in: at or below `scale_in_threshold` for
 * `scale_in_evaluation_count` periods, a StepScalingRule removes `scale_in_percent` of the
 * capacity (at least one instance) per firing, never below min_size, so a fleet that
 * keeps up (its queue near empty while busy) shrinks gradually instead of collapsing to
 * min_size; the gap between the thresholds and the longer scale-in window keep it from
 * oscillating. A CloudMonitor rule alerts the contacts when the metric stops arriving
 * for `missing_data_minutes` (without data neither alarm fires and the fleet keeps its
 * size and its bill).
 */
export interface QueueScaling {
    /**
     * CloudMonitor application group your publisher reports the metric to. Default: one is
     * created for the fleet (its id is the stack output `metric_group_id`).
     */
    cloudMonitorGroupId?: number;
    /**
     * Periods in a row at or above the threshold before the fleet grows, 1 to 100.
     * Default 3.
     */
    evaluationCount?: number;
    /**
     * With the stack's publisher: how long a received job stays invisible to other nodes
     * (the queue's visibility timeout); a node working longer renews it
     * (ChangeMessageVisibility), a node that dies gives the job back after it. Default 1800;
     * 60 to 43200 (the MNS maximum).
     */
    jobTimeoutSeconds?: number;
    /**
     * Backlog one instance works off in about one scaling period; sizes the derived
     * scale-out steps: a backlog over the threshold below 1x this adds 1 instance, 1-2x adds 2,
     * 2-4x adds 4, from 4x adds 8 (each capped at max_size - min_size). Default 1.
     */
    jobsPerInstance?: number;
    /**
     * Custom metric name: a letter, then up to 63 letters, digits or underscores.
     * Default job_queue_length.
     */
    metricName?: string;
    /**
     * Alert the contacts when no value arrived for this many minutes. Default 15; null: no
     * alert.
     */
    missingDataMinutes?: number;
    /**
     * Alarm period. Default 60.
     */
    periodSeconds?: number;
    /**
     * Who publishes the metric. `stack`: the stack creates the fleet's job queue (MNS
     * `<fleet>-jobs`, stack output `job_queue`; one message per job, received by the node that
     * runs it and deleted when it is done) and a Function Compute function that puts the
     * queue's backlog (waiting + running + delayed) as the metric every period. `external`:
     * you publish it (`gpu-infra publish-queue-metric`, your serving layer). Default by
     * layout: stack for rendering, external for inference (its backlog is the model servers'
     * pending requests, which only they know).
     * One of: stack, external.
     */
    publisher?: string;
    /**
     * Periods in a row at or below scale_in_threshold before the fleet shrinks, 1 to 100.
     * Default 10 (longer than scale-out: hysteresis).
     */
    scaleInEvaluationCount?: number;
    /**
     * Percent of the capacity removed each time the scale-in alarm fires (at least one
     * instance). Default by layout: 25 for inference (an empty queue means keeping up, not
     * idle), 100 for rendering (its backlog counts running jobs, so 0 means idle).
     */
    scaleInPercent?: number;
    /**
     * Backlog at or below which the fleet shrinks. Default 0; must be below
     * scale_out_threshold.
     */
    scaleInThreshold?: number;
    /**
     * Backlog at or above which the fleet grows. Default 1.
     */
    scaleOutThreshold?: number;
    /**
     * Explicit step adjustments (bounds relative to the threshold), replacing the derived
     * ones. Default none (derived from jobs_per_instance).
     */
    steps?: ScalingStep[];
    /**
     * Seconds a new instance needs before it takes work (GPU driver, model load); the
     * scale-out rule does not count it as capacity before that. Default 600.
     */
    warmupSeconds?: number;
}

/**
 * The private image registry (ACR) the nodes pull workload and mirrored images from.
 */
export interface RegistryConfig {
    /**
     * enterprise (an ACR Enterprise instance, VPC access only) or personal (a namespace on
     * the free personal edition). Default: enterprise in prod, personal otherwise.
     * One of: enterprise, personal.
     */
    edition?: string;
    /**
     * Enterprise instance size: Basic, Standard or Advanced. Default Standard.
     * One of: Basic, Standard, Advanced.
     */
    instanceType?: string;
    /**
     * Repositories for upstream images mirrored from registries the region may not reach
     * (ghcr.io, docker.io), in the namespace `<namespace>-mirror`, besides those gpu-infra's
     * own code runs (added by the layout). Default none.
     */
    mirrored?: string[];
    /**
     * Namespace of the stack's repositories. Default: the cluster name.
     */
    namespace?: string;
    /**
     * Enterprise instances are subscriptions: term in months (1, 2, 3, 6, 12, 24, 36, 48,
     * 60). Default 12.
     */
    periodMonths?: number;
    /**
     * Repositories for the workloads' images (jobs, model servers, render workers). Default
     * [train, serve].
     */
    repositories?: string[];
}

/**
 * Optional reserved capacity for the steady base of a fleet.
 */
export interface ReservedCapacityConfig {
    /**
     * Capacity guarantee. Default none.
     */
    guarantee?: CapacityGuarantee;
    /**
     * Reserved instance coupons. Default none.
     */
    reservedInstances?: ReservedInstances;
}

/**
 * Reserved instance coupons (ecs.ReservedInstance) for the fleet's steady base.
 */
export interface ReservedInstances {
    /**
     * Instances covered. Required.
     */
    count: number;
    /**
     * Payment option. Default No Upfront.
     * One of: No Upfront, Partial Upfront, All Upfront.
     */
    offeringType?: string;
    /**
     * Term in years. Default 1.
     */
    periodYears?: number;
    /**
     * Region-wide coupon, or zonal (tied to the fleet's first zone; it also reserves
     * capacity there). Default Region.
     * One of: Region, Zone.
     */
    scope?: string;
}

/**
 * Roll running instances onto a changed configuration (image, user data, instance
 * types, disks) with an ess.InstanceRefresh started by the `pulumi up` that makes the
 * change. ESS replaces instances in batches: it launches up to
 * `max_healthy_percent - 100` percent extra capacity, then removes old instances while at
 * least `min_healthy_percent` of the capacity stays healthy, so a batch is about
 * `100 - min_healthy_percent` percent (at least one instance); at `checkpoint_percent`
 * new instances it pauses `pause_minutes` so you can watch error rates (cancel in the
 * console to stop). ESS refreshes only groups with multi_az_policy PRIORITY and
 * scale_in_mode release; other fleets pick up a change as instances are replaced
 * (`max_instance_lifetime_days`, spot reclaims, scaling).
 */
export interface RollingRefresh {
    /**
     * Pause when this percent of instances is new. Default 50; null: no pause.
     */
    checkpointPercent?: number;
    /**
     * Default: on where ESS supports it (multi_az_policy PRIORITY, scale_in_mode release,
     * min_size at least 1); true elsewhere is an error.
     */
    enabled?: boolean;
    /**
     * Capacity allowed during the refresh, percent (new instances first). Default 120.
     */
    maxHealthyPercent?: number;
    /**
     * Capacity kept healthy during the refresh, percent. Default 80 (the ESS default).
     */
    minHealthyPercent?: number;
    /**
     * Length of the checkpoint pause in minutes. Default 10.
     */
    pauseMinutes?: number;
}

/**
 * The part of an ECS savings plan the stack's pay-as-you-go GPU instances draw on, for
 * the cost estimate. The stack does not buy it (pulumi-alicloud has no savings-plan
 * resource): it is bought in the console or with ECS CreateSavingsPlan (plan type `ecs`
 * for one instance family or `universal`, an hourly spend commitment, a term in years).
 * Spot instances are left to pay their own price.
 */
export interface SavingsPlan {
    /**
     * The commitment per hour this stack draws on (CreateSavingsPlan `CommittedAmount`,
     * or the share of it left to this stack when several stacks share the plan); paid every
     * hour, used or not. Required.
     */
    hourlyCommitmentCny: number;
    /**
     * The family of an `ecs` plan (it covers that family only), one the fleet uses; none:
     * a `universal` plan, covering every pay-as-you-go instance. Default none.
     */
    instanceFamily?: string;
    /**
     * The share of the pay-as-you-go price the plan charges for what it covers (1 minus
     * the discount the purchase page shows for the family, term and payment option; Alibaba
     * publishes no rate table). Required.
     */
    priceFactor: number;
}

/**
 * An auto-scaling GPU fleet (inference, rendering) over the zones of the network.
 */
export interface ScalingFleet {
    /**
     * Launch on-demand instances when spot stock or price cannot meet the capacity (spot
     * mixes only). Default true: a fleet short of spot still serves, at on-demand price.
     */
    compensateWithOnDemand?: boolean;
    /**
     * Instances to keep when no rule acts. Default none (ESS keeps between min and max).
     */
    desiredSize?: number;
    /**
     * Scale-in lifecycle hook: seconds an instance may drain its work before release
     * (30-21600). null: no hook. Default 600.
     */
    drainSeconds?: number;
    /**
     * GPU driver route and pinned versions. Default: Alibaba's first-boot auto-install with
     * the family's pinned driver, CUDA and cuDNN (vws families: set route grid or
     * preinstalled).
     */
    driver?: DriverConfig;
    /**
     * Step scaling on the fleet's average GPU utilisation. Default none.
     */
    gpuScaling?: GpuScaling;
    /**
     * What makes ESS replace an instance: ECS (the instance is stopped or failed) and
     * LOAD_BALANCER (it fails the load balancer's health check). Default: both behind a load
     * balancer (inference), ECS otherwise.
     */
    healthChecks?: string[];
    /**
     * Image of every node: an id, an exact custom-image name, or (default) the pinned public
     * Ubuntu 22.04 image. A new public image never changes the plan; only an edit here does
     * (it replaces each node's system disk).
     */
    image?: ImageChoice;
    /**
     * Instance types the group may launch, in order of preference (each one is a spot
     * pool). Required; at most 10 (ESS limit).
     */
    instanceTypes: string[];
    /**
     * Whether the workload survives losing an instance at short notice. false forbids spot
     * capacity (validator spot-non-interruptible). Default true.
     */
    interruptible?: boolean;
    /**
     * Replace every instance after this many days (ESS max_instance_lifetime), so fleets
     * that cannot be refreshed pick up configuration changes. Default none.
     */
    maxInstanceLifetimeDays?: number;
    /**
     * Most instances. Default 4.
     */
    maxSize?: number;
    /**
     * Fewest instances; 0 lets a batch fleet scale to zero. Default 0.
     */
    minSize?: number;
    /**
     * COST_OPTIMIZED (cheapest types first, needed for a spot mix), BALANCE (even across
     * zones) or PRIORITY (zones and types in the order given; the only policy ESS can
     * refresh). BALANCE and PRIORITY are on-demand only. Default COST_OPTIMIZED.
     * One of: COST_OPTIMIZED, BALANCE, PRIORITY.
     */
    multiAzPolicy?: string;
    /**
     * On-demand instances before any spot. Default 0.
     */
    onDemandBaseCapacity?: number;
    /**
     * Percent on-demand above the base; the rest is spot. Default 100 (no spot).
     */
    onDemandPercentageAboveBase?: number;
    /**
     * Step scaling on a custom queue-length metric. Default none.
     */
    queueScaling?: QueueScaling;
    /**
     * Rolling refresh after a configuration change. Default: on where ESS supports it.
     */
    refresh?: RollingRefresh;
    /**
     * Reserved capacity for the fleet's first instance type. Default none.
     */
    reserved?: ReservedCapacityConfig;
    /**
     * release deletes scaled-in instances; recycle (ESS economical mode, a warm pool) stops
     * them and starts them again on the next scale-out, so that skips the boot and driver
     * install while billing only their disks. recycle cannot be refreshed. Default release.
     * One of: release, recycle.
     */
    scaleInMode?: string;
    /**
     * Scheduled size changes. Default none.
     */
    schedules?: ScheduledScaling[];
    /**
     * Cheapest instance types spot capacity is spread over. Default 2.
     */
    spotInstancePools?: number;
    /**
     * Replace spot instances when they get the reclaim notice. Default true.
     */
    spotInstanceRemedy?: boolean;
    /**
     * Highest hourly price (CNY) per instance with SpotWithPriceLimit; required then, not
     * allowed otherwise. Default none.
     */
    spotPriceLimit?: number;
    /**
     * Spot bidding for spot capacity. Default SpotAsPriceGo.
     * One of: SpotAsPriceGo, SpotWithPriceLimit.
     */
    spotStrategy?: string;
    /**
     * ESSD system disk size in GiB. Default 200; 20-500 (the ESS limit).
     */
    systemDiskGib?: number;
    /**
     * ESSD performance level of the system disk. Default PL1.
     * One of: PL0, PL1, PL2, PL3.
     */
    systemDiskPerformanceLevel?: string;
    /**
     * Target tracking on a system metric. Default none.
     */
    targetTracking?: TargetTracking;
    /**
     * Instances the fleet usually runs, for the cost estimate only (it launches nothing):
     * the estimate prices the fleet at this size, between min_size and max_size. Default
     * none: the estimate uses desired_size, else min_size.
     */
    typicalSize?: number;
}

/**
 * One step of a step scaling rule; bounds are relative to the alarm threshold.
 */
export interface ScalingStep {
    /**
     * Instances to add (negative: remove). Required.
     */
    adjustment: number;
    /**
     * Lower bound (inclusive). Default none (no bound).
     */
    lower?: number;
    /**
     * Upper bound (exclusive). Default none (no bound).
     */
    upper?: number;
}

/**
 * A scheduled change of the group's sizes (ess.ScheduledTask).
 */
export interface ScheduledScaling {
    /**
     * New desired size. Default unchanged.
     */
    desiredSize?: number;
    /**
     * First run, UTC `YYYY-MM-DDThh:mmZ`, at most 90 days ahead. Required.
     */
    launchTime: string;
    /**
     * New maximum size. Default unchanged.
     */
    maxSize?: number;
    /**
     * New minimum size. Default unchanged.
     */
    minSize?: number;
    /**
     * Task name (2-31 lowercase letters, digits, hyphens). Required.
     */
    name: string;
    /**
     * Last repetition, UTC. Required with recurrence_type.
     */
    recurrenceEndTime?: string;
    /**
     * Daily, Weekly, Monthly or Cron. Default none (runs once).
     * One of: Daily, Weekly, Monthly, Cron.
     */
    recurrenceType?: string;
    /**
     * Recurrence (e.g. 1 for every day, a cron expression). Required with
     * recurrence_type.
     */
    recurrenceValue?: string;
}

/**
 * Least-privilege access. Members of the cluster's security group always reach each
 * other (NCCL, eRDMA, NFS); nothing else is open unless listed here.
 */
export interface SecurityConfig {
    /**
     * CIDRs allowed to SSH (tcp/22) to the nodes, each listed once. Default none. In prod,
     * refused if together they cover more public address space than a /8 (0.0.0.0/0, its
     * two halves, a /1, a /4, ...).
     */
    adminCidrs?: string[];
    /**
     * CIDRs allowed to reach `service_ports`, each listed once. Default none. In prod,
     * refused if together they cover more public address space than a /8.
     */
    clientCidrs?: string[];
    /**
     * Create a KMS key (automatic rotation on) for disks and buckets. Default: on in prod,
     * off elsewhere (service-managed keys are used then).
     */
    kmsEncryption?: boolean;
    /**
     * A software key management instance (kst-...) to create the key in. Default none: a
     * default key of the region, which rotates every 365 days.
     */
    kmsInstanceId?: string;
    /**
     * Days a deleted KMS key can still be recovered. Default 30; 7 to 366.
     */
    kmsPendingWindowDays?: number;
    /**
     * Automatic rotation period of the KMS key in days. Default 365; 7 to 365 with
     * `kms_instance_id`, only 365 without it.
     */
    kmsRotationDays?: number;
    /**
     * OpenSSH public key for the nodes' key pair. Default none: no key pair, and password
     * login is never configured.
     */
    publicKey?: string;
    /**
     * TCP ports the workload serves on, each listed once, opened only to `client_cidrs`
     * (and to the load balancer of layouts that have one). Default none.
     */
    servicePorts?: number[];
}

/**
 * The model server the stack runs (`security.service_ports[0]` is the port it listens
 * on): on ACK a Deployment on the GPU pool; on ECS a container on every node of the
 * fleet, with every GPU of its node, behind `load_balancer`.
 */
export interface ServingConfig {
    /**
     * The server's command and arguments. Default: the image's entrypoint.
     */
    command?: string[];
    /**
     * ACK only: GPUs each server asks for. Default: every GPU of the fleet's smallest
     * instance type (one server per node).
     */
    gpusPerPod?: number;
    /**
     * Container image. Default: the first `registry.repositories` entry, tag latest.
     */
    image?: string;
    /**
     * ACK only: an internet NLB instead of the default intranet one.
     */
    internetFacing?: boolean;
    /**
     * ACK only: most servers. Default: fleet.max_size.
     */
    maxReplicas?: number;
    /**
     * ACK only: fewest servers. Default: fleet.min_size, at least 1.
     */
    minReplicas?: number;
    /**
     * The model's prefix in the stack's models bucket (e.g. `chat` or `llama-3-8b/v2`); the
     * server finds it read-only at /mnt/models/<model> (env MODEL_DIR). On ACK the models
     * bucket is mounted there; on ECS each node downloads the files the prefix's SHA256SUMS
     * manifest (`sha256sum` output) lists, checks every one and only then starts the server.
     * Default none: the image carries its model.
     */
    model?: string;
    /**
     * HTTP path that answers 2xx once the server can take requests: the pods' readiness
     * probe, the load balancer's health check and, on ECS, what a new node waits for before it
     * tells the scaling group it is ready. Default /health (vLLM's; Triton's is
     * /v2/health/ready).
     */
    readinessPath?: string;
    /**
     * ACK only: average GPU utilisation (percent) the autoscaler keeps. Default 70.
     */
    targetGpuUtil?: number;
}

/**
 * A shared POSIX file system mounted on every node.
 */
export interface SharedFileSystemConfig {
    /**
     * Read-write or read-only mounts for the nodes. Default RDWR.
     * One of: RDWR, RDONLY.
     */
    access?: string;
    /**
     * Capacity bought, in GiB. Required for extreme and cpfs, not allowed otherwise.
     * Default none.
     */
    capacityGib?: number;
    /**
     * Create the file system. Default false.
     */
    enabled?: boolean;
    /**
     * nas_performance | nas_capacity (general-purpose NAS, pay per use), extreme (Extreme
     * NAS) or cpfs (parallel file system). Default nas_performance.
     * One of: nas_performance, nas_capacity, extreme, cpfs.
     */
    kind?: string;
    /**
     * NAS access rule user mapping: root_squash maps root on the nodes to nobody, so a
     * compromised or careless root process cannot rewrite everyone's files (run jobs as a
     * non-root user, or choose no_squash knowingly); all_squash maps every user. Default
     * root_squash.
     * One of: root_squash, all_squash, no_squash.
     */
    squash?: string;
    /**
     * Zone of an extreme or cpfs file system. Default: the first of `network.zones`.
     */
    zone?: string;
}

/**
 * The automatic snapshot policy for kept disks (created in prod only).
 */
export interface SnapshotPolicyConfig {
    /**
     * Days of the week (1 = Monday .. 7). Default every day.
     */
    repeatWeekdays?: number[];
    /**
     * Days to keep each snapshot: 1 to 65536, or -1 for until deleted. Default 7.
     */
    retentionDays?: number;
    /**
     * Hours of the day (0-23, UTC+8) to snapshot at. Default [2].
     */
    timePoints?: number[];
}

/**
 * Node disks, snapshots, the shared file system and the buckets.
 */
export interface StorageConfig {
    /**
     * Cloud Backup of the shared file system (and chosen buckets). Default: on in prod,
     * daily, kept 30 days.
     */
    backup?: BackupConfig;
    /**
     * OSS buckets. Default: the layout's purposes, tiered, private, encrypted.
     */
    buckets?: BucketsConfig;
    /**
     * Data disks on every node (ESSD AutoPL). Default one 500 GiB scratch disk; at most
     * 16.
     */
    disks?: DataDiskConfig[];
    /**
     * Declare the fixed nodes' `disks` inline on each instance (ecs.Instance data_disks), the
     * way gpu-infra created them before separate disks. Only for stacks whose nodes were
     * created so: the provider replaces a running instance whose inline disks are removed
     * (ForceNew), so keep it true there until the nodes are rebuilt anyway. With true, disk
     * edits (size, IOPS, keep) reach new nodes only (ignoreChanges on dataDisks) and nodes with
     * kept disks are protected in prod. Default false: every fixed node gets each disk as a
     * separate ecs.EcsDisk plus ecs.EcsDiskAttachment, whose size (grow only), IOPS, bursting
     * and keep change in place without touching the node. Scaling-group fleets always declare
     * their disks in the scaling configuration (ESS has no separate attachment).
     */
    inlineDisks?: boolean;
    /**
     * Shared file system. Default off.
     */
    sharedFs?: SharedFileSystemConfig;
    /**
     * Auto-snapshot policy for disks with `keep` (prod only). Default daily at 02:00,
     * kept 7 days.
     */
    snapshots?: SnapshotPolicyConfig;
}

/**
 * The small CPU node pool for the add-ons and the job controllers (no GPU taint).
 */
export interface SystemPoolConfig {
    /**
     * CPU instance types in fallback order. Default ecs.g7.xlarge, ecs.g8i.xlarge,
     * ecs.g6.xlarge (4 vCPU, 16 GiB).
     */
    instanceTypes?: string[];
    /**
     * Nodes (two keep the controllers up through a node's repair). Default 2.
     */
    nodes?: number;
    /**
     * ESSD AutoPL system disk, GiB. Default 120.
     */
    systemDiskGib?: number;
}

/**
 * Keep a system metric near a target (ess.ScalingRule TargetTrackingScalingRule).
 */
export interface TargetTracking {
    /**
     * Only scale out on this rule. Default false.
     */
    disableScaleIn?: boolean;
    /**
     * ESS system metric. Default CpuUtilization.
     * One of: CpuUtilization, IntranetRx, IntranetTx.
     */
    metric?: string;
    /**
     * Target value (percent for CpuUtilization, so at most 100). Default 70.
     */
    targetValue?: number;
    /**
     * Seconds before a new instance counts towards the metric. Default 300.
     */
    warmupSeconds?: number;
}

/**
 * GPU nodes for training, all in the first zone of `network.zones`: fixed nodes, and on
 * spot capacity a scaling group of spot workers behind the on-demand ones.
 */
export interface TrainingFleet {
    /**
     * on_demand, spot or prepaid. Default on_demand. With spot, the nodes after the
     * on-demand ones are spot workers in a scaling group (on_demand_nodes), whose scaling
     * configuration takes spot_strategy and spot_price_limit (for the workers it launches
     * next).
     * One of: on_demand, spot, prepaid.
     */
    capacity?: string;
    /**
     * GPU driver route and pinned versions. Default: Alibaba's first-boot auto-install with
     * the family's pinned driver, CUDA and cuDNN (vws families: set route grid or
     * preinstalled).
     */
    driver?: DriverConfig;
    /**
     * eRDMA on the primary interface: auto (on where the family supports it), on (an
     * ERROR on families without it) or off. Default auto.
     * One of: auto, on, off.
     */
    erdma?: string;
    /**
     * Image of every node: an id, an exact custom-image name, or (default) the pinned public
     * Ubuntu 22.04 image. A new public image never changes the plan; only an edit here does
     * (it replaces each node's system disk).
     */
    image?: ImageChoice;
    /**
     * ECS GPU instance type of every node, e.g. ecs.gn8v-8x.48xlarge. Required.
     */
    instanceType: string;
    /**
     * Whether training survives losing a node (checkpointing and elastic restart).
     * Default false: spot capacity is refused.
     */
    interruptible?: boolean;
    /**
     * Jumbo frames on the nodes (`enable_jumbo_frame`) and an eRDMA interface MTU of 8500,
     * which NCCL's LL128 protocol needs for full bandwidth; off: MTU 1400, the value eRDMA
     * requires without jumbo frames (a wrong MTU corrupts data). Needs eRDMA (validator
     * jumbo-frames-without-erdma). Choose it when the nodes are created: on running nodes only
     * `enable_jumbo_frame` changes (in place) while their MTU stays what their bootstrap set
     * (user data is ignored after creation, and cloud-init does not rerun it), so turning it
     * off leaves MTU 8500 without jumbo frames until the nodes are rebuilt. Default false.
     */
    jumboFrames?: boolean;
    /**
     * Number of nodes. Default 1.
     */
    nodes?: number;
    /**
     * With spot capacity: N nodes (node-000 on) are fixed on-demand nodes; node 0 holds the
     * elastic rendezvous (c10d, gpu-infra-torchrun), which must outlive any reclaim, and the
     * job keeps running on at least max(1, N) nodes (`--nnodes N:nodes`). The other
     * `nodes - N` are spot workers in an ESS scaling group that replaces a reclaimed one on its
     * notice (spot_instance_remedy) and launches on-demand ones when spot runs out
     * (compensate_with_on_demand); a replacement joins the running job. Default 1 with several
     * nodes, 0 with one (the one node is then a spot worker whose replacement resumes the job
     * from its checkpoint). At least 1 with several nodes; at most `nodes`; only with spot
     * capacity. A change of N moves nodes between the fixed part and the group (replaced).
     */
    onDemandNodes?: number;
    /**
     * Deployment-set strategy: auto is LowLatency for several nodes of a family that
     * supports it, Availability otherwise. Default auto.
     * One of: auto, LowLatency, Availability.
     */
    placement?: string;
    /**
     * Subscription length with prepaid capacity: 1-9, 12, 24, 36, 48 or 60. Default 1.
     */
    prepaidPeriod?: number;
    /**
     * Unit of prepaid_period. Default Month.
     * One of: Week, Month.
     */
    prepaidPeriodUnit?: string;
    /**
     * Give this `pulumi up` the current bootstrap: node user data is otherwise ignored after
     * creation (`ignoreChanges`), and Pulumi then uses the recorded value even for a node it
     * replaces, so a node replaced for another reason (eRDMA, spot strategy, KMS, inline disks)
     * would boot the bootstrap it was first created with. On, replaced nodes boot the current
     * one, and every node whose user data differs is stopped and started (the provider's
     * update; cloud-init does not run the scripts again on an existing instance). Set it for
     * the update that replaces nodes, then remove it. Default false.
     */
    pushUserData?: boolean;
    /**
     * Reserved capacity for the fleet's first instance type. Default none.
     */
    reserved?: ReservedCapacityConfig;
    /**
     * Step 1 of removing nodes in prod: nodes from this index on (node-<index> and above)
     * lose their deletion protection, in an update of their own; step 2 lowers `nodes` to this
     * number, which deletes them. At most `nodes`. Default none (every node protected in
     * prod).
     */
    scaleInFrom?: number;
    /**
     * Highest hourly price (CNY) per instance with SpotWithPriceLimit; required then, not
     * allowed otherwise. Default none.
     */
    spotPriceLimit?: number;
    /**
     * Spot bidding for spot capacity. Default SpotAsPriceGo.
     * One of: SpotAsPriceGo, SpotWithPriceLimit.
     */
    spotStrategy?: string;
    /**
     * ESSD system disk size in GiB. Default 200; 20-500 (the ESS limit).
     */
    systemDiskGib?: number;
    /**
     * ESSD performance level of the system disk. Default PL1.
     * One of: PL0, PL1, PL2, PL3.
     */
    systemDiskPerformanceLevel?: string;
}

/**
 * The render worker every node runs (a systemd unit): one job at a time from the stack's
 * job queue, rendered with `docker run --gpus` in `image`, what the command writes to
 * /output uploaded to the outputs bucket, the message deleted only after that.
 */
export interface WorkerConfig {
    /**
     * The render command and its first arguments; each job's `args` follow. Default: the
     * image's entrypoint.
     */
    command?: string[];
    /**
     * Environment variables of every render (no secrets: a render that needs one reads it
     * with the node's RAM role, e.g. from KMS Secrets Manager). Each job's `env` adds to them.
     * Default none.
     */
    environment?: {[key: string]: string};
    /**
     * GPUs each render gets (`docker run --gpus N`). Default: every GPU of the node.
     */
    gpus?: number;
    /**
     * Container image, e.g. the stack's registry's `render` repository. Required.
     */
    image: string;
    /**
     * Receives of one job before the queue moves it to the dead-letter queue
     * (`<fleet>-jobs-dead`): a failing render, or one handed back by a drain, counts. Default 5.
     */
    maxAttempts?: number;
}

export interface GpuNodesArgs {
    /**
     * The nodes: instance type, count, capacity, image and driver.
     */
    fleet: TrainingFleet;
    imageId: pulumi.Input<string>;
    keyName?: pulumi.Input<string>;
    region: string;
    roleName?: pulumi.Input<string>;
    securityGroupIds: pulumi.Input<string>[];
    tags?: {[key: string]: string};
    userData?: pulumi.Input<string>;
    /**
     * The vSwitch (one zone) the nodes run in.
     */
    vswitchId: pulumi.Input<string>;
}

/**
 * Fixed GPU nodes (gpu_infra.blocks.compute.nodes.GpuNodes): N ECS instances in one
 * vSwitch, placed by deployment sets, eRDMA where the family has it.
 */
export declare class GpuNodes extends pulumi.ComponentResource {
    /**
     * ECS instance ids, in rank order.
     */
    readonly instanceIds: pulumi.Output<string[]>;
    /**
     * Private IPs, in rank order.
     */
    readonly privateIps: pulumi.Output<string[]>;
    constructor(name: string, args: GpuNodesArgs, opts?: pulumi.ComponentResourceOptions);
}

export interface GpuScalingGroupArgs {
    /**
     * The fleet: instance types, sizes, on-demand base and spot, scaling.
     */
    fleet: ScalingFleet;
    imageId: pulumi.Input<string>;
    keyName?: pulumi.Input<string>;
    region: string;
    roleName?: pulumi.Input<string>;
    securityGroupIds: pulumi.Input<string>[];
    tags?: {[key: string]: string};
    userData?: pulumi.Input<string>;
    /**
     * The vSwitches (zones) the fleet spreads over.
     */
    vswitchIds: pulumi.Input<string>[];
}

/**
 * An auto-scaling GPU fleet (gpu_infra.blocks.compute.scaling.GpuScalingGroup): an ESS
 * scaling group across zones, on-demand base and spot above it, scaling rules.
 */
export declare class GpuScalingGroup extends pulumi.ComponentResource {
    /**
     * Its scaling configuration.
     */
    readonly scalingConfigurationId: pulumi.Output<string>;
    /**
     * The ESS scaling group.
     */
    readonly scalingGroupId: pulumi.Output<string>;
    constructor(name: string, args: GpuScalingGroupArgs, opts?: pulumi.ComponentResourceOptions);
}

export interface ImageBakeryArgs {
    /**
     * dev, staging or prod. Default dev. Its profile (schema.environment, the README's
     * environments table) says what it turns on: prod turns on deletion protection, KMS
     * encryption, data protection, versioning, snapshots and access logs, and refuses
     * world-open CIDRs.
     * One of: dev, staging, prod.
     */
    environment?: string;
    /**
     * What the image holds and how it is built. Required (at least `instance_type`).
     */
    image: ImageBuildConfig;
    /**
     * Monthly budget in CNY. The offline plan checks the cost estimate against it with the
     * `monthly-budget` policy rule (advisory unless the policy config says otherwise).
     * Default none (no budget check).
     */
    monthlyBudgetCny?: number;
    /**
     * Cluster name; prefixes every resource and bucket name. Required.
     */
    name: string;
    /**
     * VPC and vSwitches. Required (at least `zones`).
     */
    network: NetworkConfig;
    /**
     * Alibaba Cloud region, read from `alicloud:region`. Required.
     */
    region: string;
    /**
     * Names of WARNING/INFO validators to silence for this stack. Default none.
     */
    suppress?: string[];
    /**
     * Extra tags on every taggable resource, e.g. CostCenter, Owner. Default none; at most
     * 13, since Project, Stack, Environment, Layout, ManagedBy, Name and GpuFleet are always
     * added and a resource takes 20 (keys 1-128 characters, not starting with aliyun or acs:;
     * keys and values of at most 128 characters without http:// or https://).
     */
    tags?: {[key: string]: string};
}

/**
 * An image bakery (gpu_infra.layouts.ImageBakery): a network and an ECS Image Builder
 * build of the nodes' install steps, for fleets that boot the preinstalled driver.
 */
export declare class ImageBakery extends pulumi.ComponentResource {
    /**
     * The NVIDIA driver the images hold (what fleets booting them pin).
     */
    readonly driverVersion: pulumi.Output<string>;
    /**
     * The Image Builder build this run started.
     */
    readonly imageBuildId: pulumi.Output<string>;
    /**
     * The newest finished bake (none before the first).
     */
    readonly imageId: pulumi.Output<string>;
    /**
     * What the names of the baked images start with.
     */
    readonly imageNamePrefix: pulumi.Output<string>;
    /**
     * The region the images are in.
     */
    readonly imageRegion: pulumi.Output<string>;
    /**
     * The Image Builder template.
     */
    readonly imageTemplateId: pulumi.Output<string>;
    readonly vpcId: pulumi.Output<string>;
    readonly vswitchIds: pulumi.Output<{[key: string]: string}>;
    constructor(name: string, args: ImageBakeryArgs, opts?: pulumi.ComponentResourceOptions);
}

export interface InferenceServiceArgs {
    /**
     * The ACK cluster. Required with `platform: ack`, not allowed otherwise.
     */
    ack?: AckConfig;
    /**
     * dev, staging or prod. Default dev. Its profile (schema.environment, the README's
     * environments table) says what it turns on: prod turns on deletion protection, KMS
     * encryption, data protection, versioning, snapshots and access logs, and refuses
     * world-open CIDRs.
     * One of: dev, staging, prod.
     */
    environment?: string;
    /**
     * The scaling GPU fleet. Required.
     */
    fleet: ScalingFleet;
    /**
     * GPU instance types the catalog lacks, by type name (`ecs.gn9x-8x.48xlarge: {gpu_model:
     * ..., gpu_count: 8, gpu_memory_gib: 96, vcpu: 192, memory_gib: 1024}`): the fleet may
     * use them like catalog types. A type the catalog lists may not be declared; a name has at
     * most 64 characters (the nodes' user data lists each type). Default none.
     */
    instanceTypes?: {[key: string]: DeclaredInstanceType};
    /**
     * The load balancer in front of the fleet. Default: an intranet NLB. ECS only: on ACK
     * the Service in front of the model servers is the job layer's.
     */
    loadBalancer?: LoadBalancerConfig;
    /**
     * Node logs in SLS (bootstrap log, journal, kernel messages). Default on, kept for the
     * environment's retention.
     */
    logs?: LogsConfig;
    /**
     * CloudMonitor contacts, GPU fleet alarms and ECS event alerts. Default: off until
     * contacts are listed.
     */
    monitoring?: MonitoringConfig;
    /**
     * Monthly budget in CNY. The offline plan checks the cost estimate against it with the
     * `monthly-budget` policy rule (advisory unless the policy config says otherwise).
     * Default none (no budget check).
     */
    monthlyBudgetCny?: number;
    /**
     * Cluster name; prefixes every resource and bucket name. Required.
     */
    name: string;
    /**
     * How names unique beyond the stack end (bucket, RAM role and policy, key pair, ...).
     * Default `global_suffix: none`: today's names, kept for existing stacks.
     */
    naming?: NamingConfig;
    /**
     * VPC and vSwitches. Required (at least `zones`).
     */
    network: NetworkConfig;
    /**
     * ecs (GPU instances and scaling groups) or ack (node pools of a managed Kubernetes
     * cluster, from the same `fleet` settings). Default ecs.
     * One of: ecs, ack.
     */
    platform?: string;
    /**
     * Alibaba Cloud region, read from `alicloud:region`. Required.
     */
    region: string;
    /**
     * The stack's private image registry (ACR), on ECS as on ACK: the nodes pull their
     * workload images and the mirrored upstream ones from it over the VPC. Default: Enterprise
     * in prod, personal otherwise, repositories [train, serve].
     */
    registry?: RegistryConfig;
    /**
     * An ECS savings plan the account holds, for the cost estimate: it pays for the
     * fleet's on-demand (pay-as-you-go) GPU instances at its price factor up to its hourly
     * commitment, the rest at list price, spot at spot price. Default none.
     */
    savingsPlan?: SavingsPlan;
    /**
     * Access rules, login key and encryption. Default: nothing open, no key.
     */
    security?: SecurityConfig;
    /**
     * The model server the stack runs: on ACK on its GPU pool, with an NLB Service and an
     * autoscaler; on ECS a unit on every node of the fleet, behind `load_balancer`, whose
     * health checks it answers. Default none: the stack installs no server.
     */
    serving?: ServingConfig;
    /**
     * Node data disks, snapshots, shared file system and OSS buckets. Default: one 500 GiB
     * scratch disk per node, no shared file system, the layout's buckets.
     */
    storage?: StorageConfig;
    /**
     * Names of WARNING/INFO validators to silence for this stack. Default none.
     */
    suppress?: string[];
    /**
     * Extra tags on every taggable resource, e.g. CostCenter, Owner. Default none; at most
     * 13, since Project, Stack, Environment, Layout, ManagedBy, Name and GpuFleet are always
     * added and a resource takes 20 (keys 1-128 characters, not starting with aliyun or acs:;
     * keys and values of at most 128 characters without http:// or https://).
     */
    tags?: {[key: string]: string};
}

/**
 * An inference service (gpu_infra.layouts.InferenceService, or AckInferenceService with
 * `platform: ack`): an auto-scaling GPU fleet across zones behind a load balancer, a model
 * bucket, alarms.
 */
export declare class InferenceService extends pulumi.ComponentResource {
    readonly alertContactGroup: pulumi.Output<string>;
    readonly backupVaultId: pulumi.Output<string>;
    readonly bucketNames: pulumi.Output<{[key: string]: string}>;
    readonly bucketVolumeClaims: pulumi.Output<{[key: string]: string}>;
    readonly clusterId: pulumi.Output<string>;
    readonly dataDisks: pulumi.Output<{[key: string]: string}>;
    readonly fleetName: pulumi.Output<string>;
    readonly gpuFaultAlarmId: pulumi.Output<string>;
    readonly gpuHealthGroupId: pulumi.Output<string>;
    readonly gpuNodeLabels: pulumi.Output<{[key: string]: string}>;
    readonly gpuNodePoolIds: pulumi.Output<string[]>;
    readonly gpuNodeTaint: pulumi.Output<string>;
    readonly imagesToMirror: pulumi.Output<{[key: string]: string}[]>;
    readonly jobQueue: pulumi.Output<string>;
    readonly jobsNamespace: pulumi.Output<string>;
    readonly keyPairName: pulumi.Output<string>;
    readonly kmsKeyId: pulumi.Output<string>;
    readonly kubeconfigCommand: pulumi.Output<string>;
    readonly kubernetesVersion: pulumi.Output<string>;
    /**
     * The load balancer's address (ECS).
     */
    readonly loadBalancerDns: pulumi.Output<string>;
    readonly logProject: pulumi.Output<string>;
    readonly metricGroupId: pulumi.Output<string>;
    readonly mirrorCommand: pulumi.Output<string>;
    readonly mountCommand: pulumi.Output<string>;
    readonly natEip: pulumi.Output<string>;
    readonly registryAddress: pulumi.Output<string>;
    readonly registryRepositories: pulumi.Output<{[key: string]: string}>;
    readonly roleName: pulumi.Output<string>;
    readonly scalingGroupId: pulumi.Output<string>;
    readonly scratchStorageClass: pulumi.Output<string>;
    readonly securityGroupId: pulumi.Output<string>;
    /**
     * The command that prints the serving address (ACK).
     */
    readonly servingAddressCommand: pulumi.Output<string>;
    readonly sharedVolumeClaim: pulumi.Output<string>;
    readonly systemNodeLabels: pulumi.Output<{[key: string]: string}>;
    readonly vpcId: pulumi.Output<string>;
    readonly vswitchIds: pulumi.Output<{[key: string]: string}>;
    constructor(name: string, args: InferenceServiceArgs, opts?: pulumi.ComponentResourceOptions);
}

export interface RenderFarmArgs {
    /**
     * dev, staging or prod. Default dev. Its profile (schema.environment, the README's
     * environments table) says what it turns on: prod turns on deletion protection, KMS
     * encryption, data protection, versioning, snapshots and access logs, and refuses
     * world-open CIDRs.
     * One of: dev, staging, prod.
     */
    environment?: string;
    /**
     * The scaling GPU fleet. Required.
     */
    fleet: ScalingFleet;
    /**
     * GPU instance types the catalog lacks, by type name (`ecs.gn9x-8x.48xlarge: {gpu_model:
     * ..., gpu_count: 8, gpu_memory_gib: 96, vcpu: 192, memory_gib: 1024}`): the fleet may
     * use them like catalog types. A type the catalog lists may not be declared; a name has at
     * most 64 characters (the nodes' user data lists each type). Default none.
     */
    instanceTypes?: {[key: string]: DeclaredInstanceType};
    /**
     * Node logs in SLS (bootstrap log, journal, kernel messages). Default on, kept for the
     * environment's retention.
     */
    logs?: LogsConfig;
    /**
     * CloudMonitor contacts, GPU fleet alarms and ECS event alerts. Default: off until
     * contacts are listed.
     */
    monitoring?: MonitoringConfig;
    /**
     * Monthly budget in CNY. The offline plan checks the cost estimate against it with the
     * `monthly-budget` policy rule (advisory unless the policy config says otherwise).
     * Default none (no budget check).
     */
    monthlyBudgetCny?: number;
    /**
     * Cluster name; prefixes every resource and bucket name. Required.
     */
    name: string;
    /**
     * How names unique beyond the stack end (bucket, RAM role and policy, key pair, ...).
     * Default `global_suffix: none`: today's names, kept for existing stacks.
     */
    naming?: NamingConfig;
    /**
     * VPC and vSwitches. Required (at least `zones`).
     */
    network: NetworkConfig;
    /**
     * Alibaba Cloud region, read from `alicloud:region`. Required.
     */
    region: string;
    /**
     * The stack's private image registry (ACR), on ECS as on ACK: the nodes pull their
     * workload images and the mirrored upstream ones from it over the VPC. Default: Enterprise
     * in prod, personal otherwise, repositories [train, serve].
     */
    registry?: RegistryConfig;
    /**
     * An ECS savings plan the account holds, for the cost estimate: it pays for the
     * fleet's on-demand (pay-as-you-go) GPU instances at its price factor up to its hourly
     * commitment, the rest at list price, spot at spot price. Default none.
     */
    savingsPlan?: SavingsPlan;
    /**
     * Access rules, login key and encryption. Default: nothing open, no key.
     */
    security?: SecurityConfig;
    /**
     * Node data disks, snapshots, shared file system and OSS buckets. Default: one 500 GiB
     * scratch disk per node, no shared file system, the layout's buckets.
     */
    storage?: StorageConfig;
    /**
     * Names of WARNING/INFO validators to silence for this stack. Default none.
     */
    suppress?: string[];
    /**
     * Extra tags on every taggable resource, e.g. CostCenter, Owner. Default none; at most
     * 13, since Project, Stack, Environment, Layout, ManagedBy, Name and GpuFleet are always
     * added and a resource takes 20 (keys 1-128 characters, not starting with aliyun or acs:;
     * keys and values of at most 128 characters without http:// or https://).
     */
    tags?: {[key: string]: string};
    /**
     * The render worker every node runs on the jobs of the stack's job queue. Default none:
     * the nodes run no worker (you bring your own).
     */
    worker?: WorkerConfig;
}

/**
 * A render farm (gpu_infra.layouts.RenderFarm): a spot-heavy fleet of graphics
 * instances scaled on queue length down to zero, NAS for assets, buckets.
 */
export declare class RenderFarm extends pulumi.ComponentResource {
    readonly alertContactGroup: pulumi.Output<string>;
    readonly backupVaultId: pulumi.Output<string>;
    readonly bucketNames: pulumi.Output<{[key: string]: string}>;
    readonly dataDisks: pulumi.Output<{[key: string]: string}>;
    readonly fleetName: pulumi.Output<string>;
    readonly gpuHealthGroupId: pulumi.Output<string>;
    readonly imagesToMirror: pulumi.Output<{[key: string]: string}[]>;
    readonly jobQueue: pulumi.Output<string>;
    readonly keyPairName: pulumi.Output<string>;
    readonly kmsKeyId: pulumi.Output<string>;
    readonly logProject: pulumi.Output<string>;
    readonly metricGroupId: pulumi.Output<string>;
    readonly mirrorCommand: pulumi.Output<string>;
    readonly mountCommand: pulumi.Output<string>;
    readonly natEip: pulumi.Output<string>;
    readonly registryAddress: pulumi.Output<string>;
    readonly registryRepositories: pulumi.Output<{[key: string]: string}>;
    readonly roleName: pulumi.Output<string>;
    readonly scalingGroupId: pulumi.Output<string>;
    readonly securityGroupId: pulumi.Output<string>;
    readonly vpcId: pulumi.Output<string>;
    readonly vswitchIds: pulumi.Output<{[key: string]: string}>;
    constructor(name: string, args: RenderFarmArgs, opts?: pulumi.ComponentResourceOptions);
}

export interface TrainingClusterArgs {
    /**
     * The ACK cluster. Required with `platform: ack`, not allowed otherwise.
     */
    ack?: AckConfig;
    /**
     * dev, staging or prod. Default dev. Its profile (schema.environment, the README's
     * environments table) says what it turns on: prod turns on deletion protection, KMS
     * encryption, data protection, versioning, snapshots and access logs, and refuses
     * world-open CIDRs.
     * One of: dev, staging, prod.
     */
    environment?: string;
    /**
     * The GPU nodes. Required.
     */
    fleet: TrainingFleet;
    /**
     * GPU instance types the catalog lacks, by type name (`ecs.gn9x-8x.48xlarge: {gpu_model:
     * ..., gpu_count: 8, gpu_memory_gib: 96, vcpu: 192, memory_gib: 1024}`): the fleet may
     * use them like catalog types. A type the catalog lists may not be declared; a name has at
     * most 64 characters (the nodes' user data lists each type). Default none.
     */
    instanceTypes?: {[key: string]: DeclaredInstanceType};
    /**
     * Node logs in SLS (bootstrap log, journal, kernel messages). Default on, kept for the
     * environment's retention.
     */
    logs?: LogsConfig;
    /**
     * CloudMonitor contacts, GPU fleet alarms and ECS event alerts. Default: off until
     * contacts are listed.
     */
    monitoring?: MonitoringConfig;
    /**
     * Monthly budget in CNY. The offline plan checks the cost estimate against it with the
     * `monthly-budget` policy rule (advisory unless the policy config says otherwise).
     * Default none (no budget check).
     */
    monthlyBudgetCny?: number;
    /**
     * Cluster name; prefixes every resource and bucket name. Required.
     */
    name: string;
    /**
     * How names unique beyond the stack end (bucket, RAM role and policy, key pair, ...).
     * Default `global_suffix: none`: today's names, kept for existing stacks.
     */
    naming?: NamingConfig;
    /**
     * VPC and vSwitches. Required (at least `zones`).
     */
    network: NetworkConfig;
    /**
     * ecs (GPU instances and scaling groups) or ack (node pools of a managed Kubernetes
     * cluster, from the same `fleet` settings). Default ecs.
     * One of: ecs, ack.
     */
    platform?: string;
    /**
     * Alibaba Cloud region, read from `alicloud:region`. Required.
     */
    region: string;
    /**
     * The stack's private image registry (ACR), on ECS as on ACK: the nodes pull their
     * workload images and the mirrored upstream ones from it over the VPC. Default: Enterprise
     * in prod, personal otherwise, repositories [train, serve].
     */
    registry?: RegistryConfig;
    /**
     * An ECS savings plan the account holds, for the cost estimate: it pays for the
     * fleet's on-demand (pay-as-you-go) GPU instances at its price factor up to its hourly
     * commitment, the rest at list price, spot at spot price. Default none.
     */
    savingsPlan?: SavingsPlan;
    /**
     * Access rules, login key and encryption. Default: nothing open, no key.
     */
    security?: SecurityConfig;
    /**
     * Node data disks, snapshots, shared file system and OSS buckets. Default: one 500 GiB
     * scratch disk per node, no shared file system, the layout's buckets.
     */
    storage?: StorageConfig;
    /**
     * Names of WARNING/INFO validators to silence for this stack. Default none.
     */
    suppress?: string[];
    /**
     * Extra tags on every taggable resource, e.g. CostCenter, Owner. Default none; at most
     * 13, since Project, Stack, Environment, Layout, ManagedBy, Name and GpuFleet are always
     * added and a resource takes 20 (keys 1-128 characters, not starting with aliyun or acs:;
     * keys and values of at most 128 characters without http:// or https://).
     */
    tags?: {[key: string]: string};
}

/**
 * A training cluster (gpu_infra.layouts.TrainingCluster, or AckTrainingCluster with
 * `platform: ack`): GPU nodes close together in one zone (on spot capacity, spot workers in
 * a scaling group behind the on-demand ones), scratch disks, a shared file system, buckets,
 * alarms.
 */
export declare class TrainingCluster extends pulumi.ComponentResource {
    readonly alertContactGroup: pulumi.Output<string>;
    readonly backupVaultId: pulumi.Output<string>;
    readonly bucketNames: pulumi.Output<{[key: string]: string}>;
    readonly bucketVolumeClaims: pulumi.Output<{[key: string]: string}>;
    readonly clusterId: pulumi.Output<string>;
    readonly dataDisks: pulumi.Output<{[key: string]: string}>;
    /**
     * The deployment sets placing the nodes (ECS).
     */
    readonly deploymentSetIds: pulumi.Output<string[]>;
    readonly gpuFaultAlarmId: pulumi.Output<string>;
    readonly gpuHealthGroupId: pulumi.Output<string>;
    readonly gpuNodeLabels: pulumi.Output<{[key: string]: string}>;
    readonly gpuNodePoolIds: pulumi.Output<string[]>;
    readonly gpuNodeTaint: pulumi.Output<string>;
    readonly imagesToMirror: pulumi.Output<{[key: string]: string}[]>;
    /**
     * ECS instance ids of the nodes, in rank order (ECS).
     */
    readonly instanceIds: pulumi.Output<string[]>;
    readonly jobsNamespace: pulumi.Output<string>;
    readonly keyPairName: pulumi.Output<string>;
    readonly kmsKeyId: pulumi.Output<string>;
    readonly kubeconfigCommand: pulumi.Output<string>;
    readonly kubernetesVersion: pulumi.Output<string>;
    readonly logProject: pulumi.Output<string>;
    readonly mirrorCommand: pulumi.Output<string>;
    readonly mountCommand: pulumi.Output<string>;
    readonly natEip: pulumi.Output<string>;
    /**
     * The command that opens a shell on node 0 (ECS, fixed nodes).
     */
    readonly node0Shell: pulumi.Output<string>;
    /**
     * Private IPs of the nodes, in rank order (ECS).
     */
    readonly nodePrivateIps: pulumi.Output<string[]>;
    readonly registryAddress: pulumi.Output<string>;
    readonly registryRepositories: pulumi.Output<{[key: string]: string}>;
    readonly roleName: pulumi.Output<string>;
    readonly scratchStorageClass: pulumi.Output<string>;
    readonly securityGroupId: pulumi.Output<string>;
    readonly sharedVolumeClaim: pulumi.Output<string>;
    /**
     * The scaling group of the spot workers, which replaces a reclaimed one (ECS, spot
     * capacity).
     */
    readonly spotScalingGroupId: pulumi.Output<string>;
    readonly systemNodeLabels: pulumi.Output<{[key: string]: string}>;
    /**
     * The ready training job (`gpu-infra job`).
     */
    readonly trainingJob: pulumi.Output<string>;
    readonly vpcId: pulumi.Output<string>;
    readonly vswitchIds: pulumi.Output<{[key: string]: string}>;
    constructor(name: string, args: TrainingClusterArgs, opts?: pulumi.ComponentResourceOptions);
}
