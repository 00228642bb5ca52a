/**
 * The container image and the deployment (Dockerfile, .dockerignore, deploy/), checked offline: no
 * cluster and no Docker daemon.
 *
 * - deploy/kubernetes/: every object is valid against the Kubernetes schema (kubernetes-models), and
 *   the files agree with each other and with docs/behaviour.md "Configuration", "Operations", "Health" and
 *   "Several instances": probes, ports, the shutdown sequence, security context, resources, the
 *   autoscaler's and the disruption budget's targets, secrets by reference only.
 * - Dockerfile: no finding of the Dockerfile linter (dockerfile-utils); multi-stage on Node.js 24;
 *   non-root; HEALTHCHECK; production dependencies only; `node` started directly with the options of
 *   package.json's `start` script.
 * - deploy/grafana-dashboard.json: every query parses as PromQL and names only the contract's metrics
 *   and labels; the panels of the issue are there.
 * - deploy/prometheus-rules.yaml: the rule file's shape, every expression as PromQL (the contract's
 *   metrics and labels, a comparison, fixed ranges), `for` durations, severities, annotations, and
 *   runbook links to headings of docs/operations.md; the alerts of the issue are there.
 * - deploy/kubernetes/servicemonitor.yaml and prometheusrule.yaml (Prometheus Operator): valid against
 *   the operator's schemas; the ServiceMonitor selects the metrics Service and keeps the proxy's
 *   `endpoint` label; the PrometheusRule holds the rule file's groups, and every selector of every
 *   alert matches a series of a real scrape of `GET /metrics` labelled as the operator labels the
 *   ServiceMonitor's targets (`job`, `namespace`).
 * - The contract's metric list these checks use is the one the `Metrics` registry exports.
 *
 * Each check is a function that returns the problems it finds. The committed files must give none,
 * and broken copies must give the expected one, so no check passes whatever the files say.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { PrometheusRule } from '@kubernetes-models/prometheus-operator/monitoring.coreos.com/v1/PrometheusRule';
import { type IServiceMonitor, ServiceMonitor } from '@kubernetes-models/prometheus-operator/monitoring.coreos.com/v1/ServiceMonitor';
import { parser as promqlParser } from '@prometheus-io/lezer-promql';
import { DockerfileParser, type ImageTemplate, type JSONInstruction } from 'dockerfile-ast';
import { validate as lintDockerfile } from 'dockerfile-utils';
import { type IDeployment, Deployment } from 'kubernetes-models/apps/v1/Deployment';
import { type IHorizontalPodAutoscaler, HorizontalPodAutoscaler } from 'kubernetes-models/autoscaling/v2/HorizontalPodAutoscaler';
import { type IIngress, Ingress } from 'kubernetes-models/networking.k8s.io/v1/Ingress';
import { type IPodDisruptionBudget, PodDisruptionBudget } from 'kubernetes-models/policy/v1/PodDisruptionBudget';
import { type IConfigMap, ConfigMap } from 'kubernetes-models/v1/ConfigMap';
import type { IContainer } from 'kubernetes-models/v1/Container';
import { type IService, Service } from 'kubernetes-models/v1/Service';
import { parseAllDocuments, parseDocument } from 'yaml';
import { ConfigError, loadConfig } from '../src/config.js';
import { Metrics } from '../src/pipeline/metrics-registry.js';
import { startMetricsServer } from '../src/pipeline/metrics-server.js';
import { fakeJwt, send, startProxy, startRecordingUpstream } from './helpers/recording-upstream.js';
import { NEEDS_PROMTOOL } from './helpers/promtool.js';
import { HAVE_REDIS, startRedis } from './helpers/redis-server.js';

const root = fileURLToPath(new URL('..', import.meta.url));
const readText = (path: string): string => readFileSync(join(root, path), 'utf8');

/** A parsed Kubernetes object and the file it came from. */
interface Manifest {
  readonly file: string;
  readonly object: Record<string, unknown>;
}

/** Replaces the first `from` by `to` in `text`, failing when `from` is absent (so a broken copy is really broken). */
function edit(text: string, from: string | RegExp, to: string): string {
  const changed = text.replace(from, to);
  assert.notEqual(changed, text, `the text to replace is not in the file: ${String(from)}`);
  return changed;
}

/** Asserts that `problems` has one matching `pattern`. */
function assertReported(problems: readonly string[], pattern: RegExp): void {
  assert.ok(
    problems.some((p) => pattern.test(p)),
    `expected a problem matching ${pattern}, got:\n${problems.join('\n') || '(none)'}`,
  );
}

// ---------------------------------------------------------------------------------------------
// Kubernetes manifests

const MANIFEST_DIR = 'deploy/kubernetes';

/** The kinds the deployment uses, each with its schema model. Another kind fails the check. */
const MODELS: ReadonlyMap<string, new (data: never) => { validate(): void }> = new Map<string, new (data: never) => { validate(): void }>([
  ['v1/ConfigMap', ConfigMap],
  ['v1/Service', Service],
  ['apps/v1/Deployment', Deployment],
  ['autoscaling/v2/HorizontalPodAutoscaler', HorizontalPodAutoscaler],
  ['policy/v1/PodDisruptionBudget', PodDisruptionBudget],
  ['networking.k8s.io/v1/Ingress', Ingress],
  ['monitoring.coreos.com/v1/ServiceMonitor', ServiceMonitor],
  ['monitoring.coreos.com/v1/PrometheusRule', PrometheusRule],
]);

/** Largest KYC upload (`MAX_DOCUMENT_BYTES`, 10 MiB) plus room for the multipart envelope, in bytes. */
const UPLOAD_BYTES = 10 * 1024 * 1024 + 64 * 1024;

/** An nginx size (`11m`, `512k`, `1g`, bytes without a unit) in bytes; NaN when it is not one. */
function nginxSize(text: string | undefined): number {
  const m = /^(\d+)([kKmMgG]?)$/.exec(text ?? '');
  if (!m) return Number.NaN;
  const unit = { '': 1, k: 1024, m: 1024 ** 2, g: 1024 ** 3 }[(m[2] ?? '').toLowerCase()] ?? Number.NaN;
  return Number(m[1]) * unit;
}

/** Variables that must come from a Secret (docs/behaviour.md "Configuration"), never from a value in a file. */
const SECRET_VARIABLES = ['CACHE_PURGE_TOKEN', 'REDIS_URL', 'REDIS_PASSWORD', 'REDIS_SENTINEL_PASSWORD'] as const;

/** Every YAML document under deploy/kubernetes/, parsed; a YAML error or warning fails. */
function loadManifests(): Manifest[] {
  const files = readdirSync(join(root, MANIFEST_DIR), { recursive: true, encoding: 'utf8' })
    .filter((f) => /\.ya?ml$/.test(f))
    .sort();
  const out: Manifest[] = [];
  for (const name of files) {
    const file = `${MANIFEST_DIR}/${name}`;
    for (const doc of parseAllDocuments(readText(file))) {
      const issues = [...doc.errors, ...doc.warnings];
      assert.deepEqual(
        issues.map((e) => e.message),
        [],
        `${file}: YAML problems`,
      );
      const value: unknown = doc.toJS();
      if (value === null || value === undefined) continue;
      assert.ok(typeof value === 'object' && !Array.isArray(value), `${file}: a document is not a mapping`);
      out.push({ file, object: value as Record<string, unknown> });
    }
  }
  return out;
}

/** Problems of one object against the Kubernetes schema of its kind. */
function schemaProblems(m: Manifest): string[] {
  const { apiVersion, kind } = m.object;
  const id = `${String(apiVersion)}/${String(kind)}`;
  const Model = MODELS.get(id);
  if (!Model) return [`${m.file}: ${id} is not a kind this deployment uses (add its model to MODELS)`];
  try {
    new Model(m.object as never).validate();
  } catch (error) {
    return [`${m.file}: ${id} does not match the Kubernetes schema: ${(error as Error).message}`];
  }
  return [];
}

/** Where a container's variable comes from, after envFrom and env are applied as the kubelet does. */
type EnvSource =
  | { readonly kind: 'value'; readonly value: string }
  | { readonly kind: 'secret'; readonly name: string; readonly key: string; readonly optional: boolean }
  | { readonly kind: 'other' };

/** The environment of `container`: envFrom in order (a later source wins), then env (wins over envFrom). */
function resolveEnv(container: IContainer, configMaps: readonly IConfigMap[], problems: string[]): Map<string, EnvSource> {
  const env = new Map<string, EnvSource>();
  const configMap = (name: string) => {
    const found = configMaps.find((c) => c.metadata?.name === name);
    if (!found) problems.push(`ConfigMap ${name} is referenced by the container but not defined in ${MANIFEST_DIR}/`);
    return found;
  };
  for (const from of container.envFrom ?? []) {
    if (from.configMapRef) {
      for (const [key, value] of Object.entries(configMap(from.configMapRef.name ?? '')?.data ?? {})) {
        env.set(`${from.prefix ?? ''}${key}`, { kind: 'value', value });
      }
    }
    if (from.secretRef) {
      problems.push(
        `envFrom secretRef ${from.secretRef.name ?? ''}: reference each secret key with secretKeyRef, so the variables it sets are known`,
      );
    }
  }
  for (const e of container.env ?? []) {
    if (e.value !== undefined) env.set(e.name, { kind: 'value', value: e.value });
    else if (e.valueFrom?.secretKeyRef) {
      const ref = e.valueFrom.secretKeyRef;
      env.set(e.name, { kind: 'secret', name: ref.name ?? '', key: ref.key, optional: ref.optional === true });
    } else if (e.valueFrom?.configMapKeyRef) {
      const ref = e.valueFrom.configMapKeyRef;
      const value = configMap(ref.name ?? '')?.data?.[ref.key];
      env.set(e.name, value === undefined ? { kind: 'other' } : { kind: 'value', value });
    } else env.set(e.name, { kind: 'other' });
  }
  return env;
}

/** A Kubernetes quantity (`500m`, `1`, `256Mi`, `1G`) as a number of base units. */
function quantity(value: string | number | undefined): number {
  if (typeof value === 'number') return value;
  const match = /^([0-9.]+)(m|k|M|G|T|Ki|Mi|Gi|Ti)?$/.exec(value ?? '');
  if (!match) return Number.NaN;
  const factors: Record<string, number> = {
    m: 1e-3,
    k: 1e3,
    M: 1e6,
    G: 1e9,
    T: 1e12,
    Ki: 2 ** 10,
    Mi: 2 ** 20,
    Gi: 2 ** 30,
    Ti: 2 ** 40,
  };
  return Number(match[1]) * (match[2] ? (factors[match[2]] ?? Number.NaN) : 1);
}

/** Whether every label of `selector` is on `labels` with the same value (and the selector is not empty). */
function selects(selector: Record<string, string> | undefined, labels: Record<string, string> | undefined): boolean {
  const entries = Object.entries(selector ?? {});
  return entries.length > 0 && entries.every(([k, v]) => labels?.[k] === v);
}

/** The cross-file facts of the manifests; an empty list when they hold. */
function checkManifests(manifests: readonly Manifest[]): string[] {
  const problems: string[] = [];
  const of = <T>(kind: string): T[] => manifests.filter((m) => m.object.kind === kind).map((m) => m.object as T);
  const deployments = of<IDeployment>('Deployment');
  const services = of<IService>('Service');
  const configMaps = of<IConfigMap>('ConfigMap');
  const hpas = of<IHorizontalPodAutoscaler>('HorizontalPodAutoscaler');
  const pdbs = of<IPodDisruptionBudget>('PodDisruptionBudget');

  if (manifests.some((m) => m.object.kind === 'Secret')) {
    problems.push('a Secret is committed: reference the Secret by name and create it outside the repository');
  }
  for (const cm of configMaps) {
    for (const name of SECRET_VARIABLES) {
      if (cm.data?.[name] !== undefined) problems.push(`ConfigMap ${cm.metadata?.name ?? ''} holds ${name}, a secret`);
    }
  }
  if (deployments.length !== 1) return [...problems, `expected one Deployment, found ${deployments.length}`];
  const deployment = deployments[0] as IDeployment;
  const name = deployment.metadata?.name ?? '';
  const template = deployment.spec?.template;
  const pod = template?.spec;
  const podLabels = template?.metadata?.labels;
  if (!pod || pod.containers.length !== 1) {
    return [...problems, 'the Deployment must run exactly one container (one process per pod)'];
  }
  const container = pod.containers[0] as IContainer;

  if (!selects(deployment.spec?.selector.matchLabels, podLabels)) {
    problems.push('the Deployment selector does not match its pod template labels');
  }
  if (!/[:@]/.test(container.image?.split('/').pop() ?? '') || /:latest$/.test(container.image ?? '')) {
    problems.push(`container image ${container.image ?? '(none)'}: give a version tag or a digest, not latest`);
  }
  if (container.command !== undefined || container.args !== undefined) {
    problems.push('the container overrides command/args: the image ENTRYPOINT starts node directly, keep it');
  }

  // Environment (docs/behaviour.md "Configuration").
  const env = resolveEnv(container, configMaps, problems);
  const literal = (key: string): string | undefined => {
    const source = env.get(key);
    return source?.kind === 'value' ? source.value : undefined;
  };
  const expectValue = (key: string, expected: string, why: string) => {
    const actual = literal(key);
    if (actual !== expected) problems.push(`${key} is ${actual ?? '(not set)'}, expected ${expected}: ${why}`);
  };
  expectValue('NODE_ENV', 'production', 'production removes the dev-only routes');
  expectValue('HOST', '0.0.0.0', 'in a container the server listens on every address');
  for (const key of ['BFF_BASE_URL', 'STICKER_API_URL']) {
    if (!literal(key)) problems.push(`${key} is not set: required with NODE_ENV=production`);
  }
  if ((literal('WORKERS') ?? '1') !== '1') problems.push('WORKERS must be 1: one process per pod, the autoscaler adds pods');
  for (const key of SECRET_VARIABLES) {
    const source = env.get(key);
    // The passwords of Sentinel and cluster mode are set only with those topologies (deploy/README.md "Redis").
    if (source === undefined && (key === 'REDIS_PASSWORD' || key === 'REDIS_SENTINEL_PASSWORD')) continue;
    if (source?.kind !== 'secret') problems.push(`${key} must come from a Secret (secretKeyRef), not ${source?.kind ?? 'nothing'}`);
  }
  const literalEnv: Record<string, string> = {};
  for (const [key, source] of env) if (source.kind === 'value') literalEnv[key] = source.value;
  try {
    loadConfig(literalEnv);
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    problems.push(`the manifests' configuration is refused by the server: ${error.message}`);
  }

  // Ports.
  const appPort = Number(literal('PORT') ?? '3000');
  const metricsPort = Number(literal('METRICS_PORT'));
  const healthPort = literal('HEALTH_PORT') === undefined ? undefined : Number(literal('HEALTH_PORT'));
  /** The container port a probe or a Service names (by name or number), if the container declares it. */
  const portOf = (port: string | number | undefined): number | undefined =>
    container.ports?.find((p) => (typeof port === 'number' ? p.containerPort === port : p.name === port))?.containerPort;
  if (!container.ports?.some((p) => p.containerPort === appPort)) {
    problems.push(`no container port is PORT (${appPort})`);
  }
  if (!Number.isInteger(metricsPort) || metricsPort === appPort) {
    problems.push(`METRICS_PORT must be set to a port of its own, got ${literal('METRICS_PORT') ?? '(not set)'}`);
  }
  const metricsContainerPort = container.ports?.find((p) => p.name === 'metrics');
  if (metricsContainerPort?.containerPort !== metricsPort) {
    problems.push(`the container port named metrics is ${metricsContainerPort?.containerPort ?? '(none)'}, METRICS_PORT is ${metricsPort}`);
  }
  const annotations = template?.metadata?.annotations ?? {};
  if (
    annotations['prometheus.io/scrape'] !== 'true' ||
    annotations['prometheus.io/port'] !== String(metricsPort) ||
    annotations['prometheus.io/path'] !== '/metrics'
  ) {
    problems.push(`pod annotations must say prometheus.io/scrape "true", port "${metricsPort}", path "/metrics"`);
  }

  // Probes (docs/behaviour.md "Health").
  const probe = (which: 'readinessProbe' | 'livenessProbe' | 'startupProbe', path: string) => {
    const get = container[which]?.httpGet;
    if (!get) return problems.push(`${which} must be an httpGet of ${path}`);
    if (get.path !== path) problems.push(`${which} path is ${get.path ?? '(none)'}, expected ${path}`);
    // The probes go to HEALTH_PORT when it is set (a listener of its own, never behind a storm on PORT).
    const probePort = healthPort ?? appPort;
    if (portOf(get.port) !== probePort)
      problems.push(
        `${which} port ${String(get.port)} is not ${healthPort === undefined ? 'the application port' : 'HEALTH_PORT'} ${probePort}`,
      );
    return undefined;
  };
  probe('readinessProbe', '/readyz');
  probe('livenessProbe', '/healthz');
  // A startup probe on /readyz would restart pods in a loop while the BFF is down.
  if (container.startupProbe) probe('startupProbe', '/healthz');

  // Services.
  const front = services.filter((s) => s.spec?.ports?.some((p) => portOf(p.targetPort ?? p.port) === appPort));
  if (front.length !== 1) problems.push(`expected one Service in front of the application port, found ${front.length}`);
  for (const service of services) {
    const sName = service.metadata?.name ?? '';
    if (!selects(service.spec?.selector, podLabels)) problems.push(`Service ${sName} selects no pod of the Deployment`);
    for (const port of service.spec?.ports ?? []) {
      const target = portOf(port.targetPort ?? port.port);
      if (target === undefined) problems.push(`Service ${sName} targetPort ${String(port.targetPort)} is no container port`);
    }
  }
  for (const service of front) {
    if (service.spec?.ports?.some((p) => portOf(p.targetPort ?? p.port) === metricsPort)) {
      problems.push(`Service ${service.metadata?.name ?? ''} exposes the metrics port next to the public one`);
    }
  }
  const metricsServicePort = services.flatMap((s) => s.spec?.ports ?? []).find((p) => p.name === 'metrics');
  if (!metricsServicePort || portOf(metricsServicePort.targetPort ?? metricsServicePort.port) !== metricsPort) {
    problems.push('no Service port named metrics targets METRICS_PORT');
  }

  // Shutdown (docs/behaviour.md "Operations").
  const preStop = container.lifecycle?.preStop;
  const command = preStop?.exec?.command ?? [];
  const preStopSeconds =
    preStop?.sleep?.seconds ?? (command.length === 2 && /^(\/bin\/)?sleep$/.test(command[0] ?? '') ? Number(command[1]) : undefined);
  const delayMs = Number(literal('SHUTDOWN_DELAY_MS') ?? '0');
  const timeoutMs = Number(literal('SHUTDOWN_TIMEOUT_MS') ?? '10000');
  const grace = pod.terminationGracePeriodSeconds ?? 30;
  if (preStopSeconds === undefined || !(preStopSeconds > 0)) {
    problems.push('the preStop hook must be a sleep of some seconds');
  } else {
    if (preStopSeconds * 1000 !== delayMs) {
      problems.push(`preStop sleep (${preStopSeconds} s) does not match SHUTDOWN_DELAY_MS (${delayMs} ms)`);
    }
    if (!(grace > preStopSeconds + delayMs / 1000 + timeoutMs / 1000)) {
      problems.push(
        `terminationGracePeriodSeconds ${grace} must exceed preStop ${preStopSeconds} s + SHUTDOWN_DELAY_MS ${delayMs} ms + SHUTDOWN_TIMEOUT_MS ${timeoutMs} ms`,
      );
    }
  }

  // Security context: the container's fields win over the pod's.
  const podSc = pod.securityContext ?? {};
  const sc = container.securityContext ?? {};
  if ((sc.runAsNonRoot ?? podSc.runAsNonRoot) !== true) problems.push('runAsNonRoot must be true');
  const uid = sc.runAsUser ?? podSc.runAsUser;
  if (uid === undefined || uid === 0) {
    problems.push('runAsUser must be a non-zero uid: the image USER is a name, which the kubelet cannot check against runAsNonRoot');
  }
  if (sc.readOnlyRootFilesystem !== true) problems.push('readOnlyRootFilesystem must be true');
  if (sc.allowPrivilegeEscalation !== false) problems.push('allowPrivilegeEscalation must be false');
  if (sc.privileged === true) problems.push('the container must not be privileged');
  if (!sc.capabilities?.drop?.includes('ALL')) problems.push('capabilities must drop ALL');
  if ((sc.seccompProfile ?? podSc.seccompProfile)?.type !== 'RuntimeDefault') problems.push('seccompProfile must be RuntimeDefault');

  // Resources.
  const { requests, limits } = container.resources ?? {};
  for (const resource of ['cpu', 'memory']) {
    const request = requests?.[resource];
    const limit = limits?.[resource];
    if (request === undefined) problems.push(`resources.requests.${resource} is not set`);
    if (limit === undefined) problems.push(`resources.limits.${resource} is not set`);
    if (request !== undefined && limit !== undefined && !(quantity(request) <= quantity(limit))) {
      problems.push(`resources.requests.${resource} (${request}) exceeds resources.limits.${resource} (${limit})`);
    }
  }

  // Autoscaler and disruption budget.
  if (hpas.length !== 1) problems.push(`expected one HorizontalPodAutoscaler, found ${hpas.length}`);
  for (const hpa of hpas) {
    const target = hpa.spec?.scaleTargetRef;
    if (target?.apiVersion !== 'apps/v1' || target.kind !== 'Deployment' || target.name !== name) {
      problems.push(`HorizontalPodAutoscaler scaleTargetRef ${JSON.stringify(target)} is not Deployment ${name}`);
    }
    if (!hpa.spec?.metrics?.some((m) => m.type === 'Resource' && m.resource?.name === 'cpu')) {
      problems.push('the HorizontalPodAutoscaler does not scale on CPU');
    }
    const min = hpa.spec?.minReplicas ?? 1;
    if (min < 2) problems.push(`minReplicas ${min}: at least 2, so a voluntary disruption leaves a pod serving`);
    if ((hpa.spec?.maxReplicas ?? 0) < min) problems.push('maxReplicas is below minReplicas');
    if (deployment.spec?.replicas !== undefined) {
      problems.push('the Deployment sets replicas although the HorizontalPodAutoscaler owns the count');
    }
    const redis = env.get('REDIS_URL');
    if ((hpa.spec?.maxReplicas ?? 0) > 1 && (redis?.kind !== 'secret' || redis.optional)) {
      problems.push('several replicas need REDIS_URL (docs/behaviour.md "Several instances"): a required secretKeyRef');
    }
    for (const pdb of pdbs) {
      const minAvailable = pdb.spec?.minAvailable;
      if (typeof minAvailable === 'number' && minAvailable >= min) {
        problems.push(`PodDisruptionBudget minAvailable ${minAvailable} blocks every drain at ${min} replicas`);
      }
    }
  }
  if (pdbs.length !== 1) problems.push(`expected one PodDisruptionBudget, found ${pdbs.length}`);
  for (const pdb of pdbs) {
    const selector = pdb.spec?.selector;
    if (selector?.matchExpressions?.length || !selects(selector?.matchLabels, podLabels)) {
      problems.push(`PodDisruptionBudget ${pdb.metadata?.name ?? ''} selector does not match the pod labels`);
    }
    if (pdb.spec?.minAvailable === undefined && pdb.spec?.maxUnavailable === undefined) {
      problems.push('the PodDisruptionBudget sets neither minAvailable nor maxUnavailable');
    }
  }

  // One origin (docs/deployment.md): the Ingress sends /api/ to the proxy's public Service and every
  // other path elsewhere (the front end), takes KYC uploads, and its host is an allowed origin.
  const ingresses = of<IIngress>('Ingress');
  if (ingresses.length !== 1) problems.push(`expected one Ingress, found ${ingresses.length}`);
  const frontNames = new Set(front.map((s) => s.metadata?.name ?? ''));
  for (const ingress of ingresses) {
    const iName = ingress.metadata?.name ?? '';
    const bodySize = nginxSize(ingress.metadata?.annotations?.['nginx.ingress.kubernetes.io/proxy-body-size']);
    if (!(bodySize >= UPLOAD_BYTES))
      problems.push(`Ingress ${iName}: proxy-body-size must take a 10 MiB KYC upload (at least ${UPLOAD_BYTES} bytes)`);
    if (ingress.spec?.ingressClassName !== 'nginx')
      problems.push(`Ingress ${iName}: ingressClassName must be nginx (its annotations are ingress-nginx's)`);
    const allowed = (literal('ALLOWED_ORIGINS') ?? '').split(',').map((o) => o.trim());
    for (const rule of ingress.spec?.rules ?? []) {
      const paths = rule.http?.paths ?? [];
      const api = paths.filter((p) => (p.path === '/api/' || p.path === '/api') && p.pathType === 'Prefix');
      if (api.length !== 1 || !frontNames.has(api[0]?.backend.service?.name ?? '')) {
        problems.push(`Ingress ${iName} host ${rule.host ?? '*'}: /api/ (Prefix) must go to the proxy's public Service`);
      }
      for (const p of paths) {
        const target = p.backend.service?.name ?? '';
        if (p !== api[0] && frontNames.has(target))
          problems.push(`Ingress ${iName}: ${p.path ?? ''} goes to the proxy, which serves only /api/`);
        if (services.some((s) => s.metadata?.name === target) && !frontNames.has(target))
          problems.push(`Ingress ${iName}: ${p.path ?? ''} exposes Service ${target}`);
      }
      if (!paths.some((p) => p.path === '/' && p.pathType === 'Prefix' && !frontNames.has(p.backend.service?.name ?? ''))) {
        problems.push(`Ingress ${iName} host ${rule.host ?? '*'}: every other path (/) must go to the front end`);
      }
      if (rule.host && literal('ALLOWED_ORIGINS') !== undefined && !allowed.includes(`https://${rule.host}`)) {
        problems.push(`Ingress ${iName}: https://${rule.host} is not in ALLOWED_ORIGINS`);
      }
    }
  }
  if (ingresses.length > 0 && !literal('TRUSTED_PROXIES')) {
    problems.push("TRUSTED_PROXIES is not set: behind the Ingress every visitor would count as the controller's address");
  }
  return problems;
}

describe('Kubernetes manifests (deploy/kubernetes)', () => {
  const manifests = loadManifests();

  test('every object is valid against the Kubernetes schema of its kind', () => {
    assert.ok(manifests.length >= 5, `expected the manifests, found ${manifests.length} objects`);
    assert.deepEqual(manifests.flatMap(schemaProblems), []);
    const ids = manifests.map((m) => `${String(m.object.kind)}/${String((m.object.metadata as { name?: string } | undefined)?.name)}`);
    assert.deepEqual(
      ids.filter((id, i) => ids.indexOf(id) !== i),
      [],
      'duplicate kind/name',
    );
  });

  test('the schema check rejects a wrong type, a missing field and an unknown kind', () => {
    const deployment = manifests.find((m) => m.object.kind === 'Deployment');
    assert.ok(deployment);
    const wrongType = structuredClone(deployment.object) as unknown as IDeployment;
    (wrongType.spec?.template.spec?.containers[0]?.ports?.[0] as { containerPort: unknown }).containerPort = 'http';
    assertReported(schemaProblems({ file: 'x', object: wrongType as unknown as Record<string, unknown> }), /containerPort must be integer/);
    const noSelector = structuredClone(deployment.object) as { spec: Record<string, unknown> };
    delete noSelector.spec.selector;
    assertReported(schemaProblems({ file: 'x', object: noSelector }), /selector/);
    assertReported(schemaProblems({ file: 'x', object: { apiVersion: 'v1', kind: 'Secret' } }), /not a kind this deployment uses/);
  });

  test('the files agree with each other and with the contract', () => {
    assert.deepEqual(checkManifests(manifests), []);
  });

  /** A copy of the manifests with `change` applied to the first object of `kind`. */
  const broken = (kind: string, change: (o: Record<string, unknown>) => void): Manifest[] =>
    manifests.map((m) => {
      const object = structuredClone(m.object);
      if (m === manifests.find((x) => x.object.kind === kind)) change(object);
      return { file: m.file, object };
    });
  const containerOf = (o: Record<string, unknown>) => (o as unknown as IDeployment).spec?.template.spec?.containers[0] as IContainer;
  const setEnv = (o: Record<string, unknown>, key: string, value: string) => {
    const c = containerOf(o);
    c.env = [...(c.env ?? []).filter((e) => e.name !== key), { name: key, value }];
  };

  const cases: [string, string, (o: Record<string, unknown>) => void, RegExp][] = [
    [
      'readiness on /healthz',
      'Deployment',
      (o) => void ((containerOf(o).readinessProbe ?? {}).httpGet = { path: '/healthz', port: 'http' }),
      /readinessProbe path/,
    ],
    [
      'liveness on /readyz',
      'Deployment',
      (o) => void ((containerOf(o).livenessProbe ?? {}).httpGet = { path: '/readyz', port: 'http' }),
      /livenessProbe path/,
    ],
    [
      'readiness on another port',
      'Deployment',
      (o) => void ((containerOf(o).readinessProbe ?? {}).httpGet = { path: '/readyz', port: 'metrics' }),
      /readinessProbe port/,
    ],
    [
      'Service targetPort not a container port',
      'Service',
      (o) => void (((o as unknown as IService).spec?.ports ?? [])[0]!.targetPort = 8080),
      /targetPort 8080 is no container port/,
    ],
    [
      'Service selecting other pods',
      'Service',
      (o) => void ((o as unknown as IService).spec!.selector = { app: 'other' }),
      /selects no pod/,
    ],
    ['metrics port renamed', 'Deployment', (o) => void (containerOf(o).ports![1]!.name = 'prom'), /named metrics/],
    [
      'METRICS_PORT not the metrics port',
      'ConfigMap',
      (o) => void ((o as unknown as IConfigMap).data!.METRICS_PORT = '9100'),
      /METRICS_PORT is 9100|port named metrics/,
    ],
    [
      'grace period too short',
      'Deployment',
      (o) => void ((o as unknown as IDeployment).spec!.template.spec!.terminationGracePeriodSeconds = 20),
      /terminationGracePeriodSeconds 20 must exceed/,
    ],
    ['longer SHUTDOWN_TIMEOUT_MS', 'Deployment', (o) => setEnv(o, 'SHUTDOWN_TIMEOUT_MS', '25000'), /must exceed/],
    [
      'SHUTDOWN_DELAY_MS not matching preStop',
      'Deployment',
      (o) => setEnv(o, 'SHUTDOWN_DELAY_MS', '2000'),
      /does not match SHUTDOWN_DELAY_MS/,
    ],
    ['no preStop', 'Deployment', (o) => void delete containerOf(o).lifecycle, /preStop hook/],
    [
      'runAsNonRoot false',
      'Deployment',
      (o) => void ((o as unknown as IDeployment).spec!.template.spec!.securityContext!.runAsNonRoot = false),
      /runAsNonRoot/,
    ],
    [
      'no runAsUser',
      'Deployment',
      (o) => void delete (o as unknown as IDeployment).spec!.template.spec!.securityContext!.runAsUser,
      /runAsUser/,
    ],
    [
      'writable root filesystem',
      'Deployment',
      (o) => void (containerOf(o).securityContext!.readOnlyRootFilesystem = false),
      /readOnlyRootFilesystem/,
    ],
    [
      'privilege escalation allowed',
      'Deployment',
      (o) => void (containerOf(o).securityContext!.allowPrivilegeEscalation = true),
      /allowPrivilegeEscalation/,
    ],
    ['no limits', 'Deployment', (o) => void delete containerOf(o).resources!.limits, /limits\.cpu is not set/],
    [
      'request above limit',
      'Deployment',
      (o) => void (containerOf(o).resources!.requests!.memory = '1Gi'),
      /requests\.memory \(1Gi\) exceeds/,
    ],
    [
      'HPA on another Deployment',
      'HorizontalPodAutoscaler',
      (o) => void ((o as unknown as IHorizontalPodAutoscaler).spec!.scaleTargetRef.name = 'other'),
      /scaleTargetRef/,
    ],
    ['replicas next to the HPA', 'Deployment', (o) => void ((o as unknown as IDeployment).spec!.replicas = 3), /sets replicas/],
    [
      'PDB selecting other pods',
      'PodDisruptionBudget',
      (o) => void ((o as unknown as IPodDisruptionBudget).spec!.selector = { matchLabels: { app: 'other' } }),
      /PodDisruptionBudget .* selector/,
    ],
    ['REDIS_URL as a value', 'Deployment', (o) => setEnv(o, 'REDIS_URL', 'redis://redis:6379'), /REDIS_URL must come from a Secret/],
    ['REDIS_PASSWORD as a value', 'Deployment', (o) => setEnv(o, 'REDIS_PASSWORD', 'hunter2'), /REDIS_PASSWORD must come from a Secret/],
    [
      'secret in the ConfigMap',
      'ConfigMap',
      (o) => void ((o as unknown as IConfigMap).data!.CACHE_PURGE_TOKEN = 'x'.repeat(20)),
      /holds CACHE_PURGE_TOKEN/,
    ],
    [
      'NODE_ENV development',
      'ConfigMap',
      (o) => void ((o as unknown as IConfigMap).data!.NODE_ENV = 'development'),
      /NODE_ENV is development/,
    ],
    ['BFF_BASE_URL missing', 'ConfigMap', (o) => void delete (o as unknown as IConfigMap).data!.BFF_BASE_URL, /BFF_BASE_URL is not set/],
    [
      'a value the server refuses',
      'ConfigMap',
      (o) => void ((o as unknown as IConfigMap).data!.UPSTREAM_TIMEOUT_MS = 'soon'),
      /refused by the server/,
    ],
    ['two workers', 'ConfigMap', (o) => void ((o as unknown as IConfigMap).data!.WORKERS = '2'), /WORKERS must be 1/],
    ['command override', 'Deployment', (o) => void (containerOf(o).command = ['npm', 'start']), /command\/args/],
    [
      'upload limit of 1m',
      'Ingress',
      (o) => void ((o as unknown as IIngress).metadata!.annotations!['nginx.ingress.kubernetes.io/proxy-body-size'] = '1m'),
      /proxy-body-size must take a 10 MiB/,
    ],
    [
      '/api/ to the front end',
      'Ingress',
      (o) => void ((o as unknown as IIngress).spec!.rules![0]!.http!.paths[0]!.backend.service!.name = 'front-end'),
      /\/api\/ \(Prefix\) must go to the proxy/,
    ],
    [
      'every path to the proxy',
      'Ingress',
      (o) => void ((o as unknown as IIngress).spec!.rules![0]!.http!.paths[1]!.backend.service!.name = 'front-proxy'),
      /\/ goes to the proxy|every other path/,
    ],
    [
      'the metrics Service exposed',
      'Ingress',
      (o) => void ((o as unknown as IIngress).spec!.rules![0]!.http!.paths[1]!.backend.service!.name = 'front-proxy-metrics'),
      /exposes Service front-proxy-metrics/,
    ],
    [
      'a host not in ALLOWED_ORIGINS',
      'Ingress',
      (o) => void ((o as unknown as IIngress).spec!.rules![0]!.host = 'shop.example.com'),
      /https:\/\/shop\.example\.com is not in ALLOWED_ORIGINS/,
    ],
    [
      'no TRUSTED_PROXIES',
      'ConfigMap',
      (o) => void delete (o as unknown as IConfigMap).data!.TRUSTED_PROXIES,
      /TRUSTED_PROXIES is not set/,
    ],
  ];
  for (const [what, kind, change, pattern] of cases) {
    test(`the cross-file check reports: ${what}`, () => {
      assertReported(checkManifests(broken(kind, change)), pattern);
    });
  }

  test('the cross-file check reports a committed Secret', () => {
    const withSecret = [...manifests, { file: 'x', object: { apiVersion: 'v1', kind: 'Secret', metadata: { name: 's' } } }];
    assertReported(checkManifests(withSecret), /a Secret is committed/);
  });
});

// ---------------------------------------------------------------------------------------------
// ingress-nginx controller values (deploy/ingress-nginx/values.yaml)

interface ControllerValues {
  controller?: { service?: { externalTrafficPolicy?: string }; config?: Record<string, string> };
}

/**
 * Problems of the controller's Helm values for the client's address (docs/deployment.md): the address
 * survives the cloud load balancer (`externalTrafficPolicy: Local`, or PROXY protocol), and a client's
 * own X-Forwarded-For is not believed (`use-forwarded-headers` is only for a balancer that sets it).
 */
function checkControllerValues(values: ControllerValues): string[] {
  const problems: string[] = [];
  const config = values.controller?.config ?? {};
  const local = values.controller?.service?.externalTrafficPolicy === 'Local';
  const proxyProtocol = config['use-proxy-protocol'] === 'true';
  if (!local && !proxyProtocol)
    problems.push('the client address is lost at the load balancer: externalTrafficPolicy Local or use-proxy-protocol "true"');
  if (config['use-forwarded-headers'] === 'true')
    problems.push('use-forwarded-headers "true" believes an X-Forwarded-For a client sends through an L4 load balancer');
  for (const [key, value] of Object.entries(config))
    if (typeof value !== 'string') problems.push(`config ${key}: ConfigMap values are strings`);
  return problems;
}

describe('ingress-nginx controller values (deploy/ingress-nginx/values.yaml)', () => {
  const doc = parseDocument(readText('deploy/ingress-nginx/values.yaml'));
  const values = doc.toJS() as ControllerValues;

  test('parse, and keep the client address from the load balancer to the proxy', () => {
    assert.deepEqual(
      [...doc.errors, ...doc.warnings].map((e) => e.message),
      [],
    );
    assert.deepEqual(checkControllerValues(values), []);
  });

  test('the check reports a lost address and a believed client header', () => {
    assertReported(
      checkControllerValues({ controller: { service: { externalTrafficPolicy: 'Cluster' }, config: {} } }),
      /client address is lost/,
    );
    assertReported(
      checkControllerValues({ controller: { service: { externalTrafficPolicy: 'Local' }, config: { 'use-forwarded-headers': 'true' } } }),
      /believes an X-Forwarded-For/,
    );
    assert.deepEqual(checkControllerValues({ controller: { config: { 'use-proxy-protocol': 'true' } } }), []);
  });
});

// ---------------------------------------------------------------------------------------------
// Dockerfile

interface PackageJson {
  scripts: Record<string, string>;
}

/** One build stage: its FROM and the instructions of its image. */
interface Stage {
  readonly name: string | null;
  readonly image: string;
  readonly tag: string | null;
  readonly template: ImageTemplate;
}

/** The Dockerfile's facts; an empty list when they hold. */
/** The containerPorts of deploy/kubernetes/deployment.yaml (public, metrics, health): the image must EXPOSE each. */
const DEPLOYMENT_PORTS: readonly number[] = [
  ...readFileSync(new URL('../deploy/kubernetes/deployment.yaml', import.meta.url), 'utf8').matchAll(/containerPort: (\d+)/g),
].map((m) => Number(m[1]));

function checkDockerfile(text: string, pkg: PackageJson, dockerignore: string, ports: readonly number[] = DEPLOYMENT_PORTS): string[] {
  const problems = lintDockerfile(text).map((d) => `Dockerfile line ${d.range.start.line + 1}: ${d.message}`);
  const dockerfile = DockerfileParser.parse(text);
  const stages: Stage[] = dockerfile.getFROMs().map((from) => {
    const template = dockerfile.getContainingImage(from.getRange().start);
    assert.ok(template, 'a FROM without its image');
    return { name: from.getBuildStage(), image: from.getImageName() ?? '', tag: from.getImageTag(), template };
  });
  const final = stages.at(-1);
  if (stages.length < 2 || !final) return [...problems, 'the Dockerfile must be multi-stage (a build stage and a final stage)'];
  const stageNames = new Set(stages.map((s) => s.name).filter((n) => n !== null));
  for (const stage of stages) {
    if (stageNames.has(stage.image)) continue;
    if (!/^(library\/)?node$/.test(stage.image) || !/^24([.-]|$)/.test(stage.tag ?? '')) {
      problems.push(`stage ${stage.name ?? '(unnamed)'} is based on ${stage.image}:${stage.tag ?? ''}, expected node:24 (current LTS)`);
    }
  }
  const keyword = (stage: Stage, k: string) => stage.template.getInstructions().filter((i) => i.getKeyword() === k);
  const runs = (stage: Stage) => keyword(stage, 'RUN').map((i) => i.getArgumentsContent() ?? '');
  /** The stage a COPY --from of `path` in the final stage takes it from. */
  const copiedFrom = (path: RegExp): Stage | undefined => {
    const copy = final.template.getCOPYs().find((c) =>
      c
        .getArguments()
        .slice(0, -1)
        .some((a) => path.test(a.getValue())),
    );
    const from = copy?.getFromFlag()?.getValue();
    return stages.find((s) => s.name === from && s !== final);
  };

  // Dependencies and build.
  const deps = copiedFrom(/(^|\/)node_modules\/?$/);
  if (!deps || !runs(deps).some((r) => /\bnpm ci\b[^;&|]*--omit=dev/.test(r))) {
    problems.push('the final stage must copy node_modules from a stage that runs npm ci --omit=dev');
  }
  const build = copiedFrom(/(^|\/)dist\/?$/);
  const buildRuns = build ? runs(build) : [];
  const ci = buildRuns.findIndex((r) => /\bnpm ci\b/.test(r) && !/--omit=dev/.test(r));
  const runBuild = buildRuns.findIndex((r) => /\bnpm run build\b/.test(r));
  if (!build || ci < 0 || runBuild < ci) {
    problems.push('the final stage must copy dist from a stage that runs npm ci, then npm run build');
  }
  if (
    !final.template.getCOPYs().some((c) =>
      c
        .getArguments()
        .slice(0, -1)
        .some((a) => /(^|\/)package\.json$/.test(a.getValue())),
    )
  ) {
    problems.push('the final stage must copy package.json');
  }
  for (const script of ['preinstall', 'install', 'postinstall', 'prepare']) {
    if (pkg.scripts[script] !== undefined) {
      problems.push(
        `package.json has a ${script} script: npm ci --omit=dev (scripts ignored) would not run it, or would need dev dependencies`,
      );
    }
  }

  // Runtime: user, environment, health check, command.
  // A number (the base image's `node` user, 1000): the kubelet checks runAsNonRoot only against a numeric user.
  const user = keyword(final, 'USER').at(-1)?.getArgumentsContent()?.split(':')[0];
  if (user === undefined || user === 'root' || user === '0')
    problems.push(`the final stage must run as the node user (1000), not root (${user ?? 'no USER'})`);
  else if (!/^[1-9][0-9]*$/.test(user))
    problems.push(`the final stage's USER ${user} must be a number (the node user is 1000): runAsNonRoot cannot be checked against a name`);
  const exposed = new Set(
    keyword(final, 'EXPOSE')
      .flatMap((e) => (e.getArgumentsContent() ?? '').split(/\s+/))
      .map((p) => p.split('/')[0]),
  );
  for (const port of ports)
    if (!exposed.has(String(port)))
      problems.push(`EXPOSE does not list port ${port} (a containerPort of deploy/kubernetes/deployment.yaml)`);
  const env = new Map(final.template.getENVs().flatMap((e) => e.getProperties().map((p) => [p.getName(), p.getValue()] as const)));
  if (env.get('NODE_ENV') !== 'production')
    problems.push(`the final stage must set NODE_ENV=production, not ${env.get('NODE_ENV') ?? '(unset)'}`);
  if (env.get('HOST') !== '0.0.0.0') problems.push('the final stage must set HOST=0.0.0.0');
  const healthcheck = final.template.getHEALTHCHECKs().at(-1);
  if (
    !healthcheck ||
    healthcheck.getSubcommand()?.getValue().toUpperCase() !== 'CMD' ||
    !healthcheck.getArgumentsContent()?.includes('/healthz')
  ) {
    problems.push('the final stage must have a HEALTHCHECK CMD on /healthz');
  }
  const execForm = (i: JSONInstruction | undefined): string[] | undefined =>
    i && i.getOpeningBracket() !== null && i.getClosingBracket() !== null ? i.getJSONStrings().map((s) => s.getJSONValue()) : undefined;
  const entrypointInstruction = final.template.getENTRYPOINTs().at(-1);
  const entrypoint = execForm(entrypointInstruction);
  const cmdInstruction = final.template.getCMDs().at(-1);
  const cmdAfter =
    cmdInstruction && entrypointInstruction && cmdInstruction.getRange().start.line > entrypointInstruction.getRange().start.line;
  const cmd = cmdAfter ? execForm(cmdInstruction) : [];
  const start = pkg.scripts.start?.trim().split(/\s+/) ?? [];
  if (start[0] !== 'node') problems.push(`package.json start script is not a plain node command: ${pkg.scripts.start ?? '(none)'}`);
  if (!entrypoint || cmd === undefined) {
    problems.push('the final stage must start the server with ENTRYPOINT (and CMD) in exec form, so node itself gets SIGTERM');
  } else if (JSON.stringify([...entrypoint, ...cmd]) !== JSON.stringify(start)) {
    problems.push(`the image runs ${JSON.stringify([...entrypoint, ...cmd])}, package.json start runs ${JSON.stringify(start)}`);
  }

  // The build context: .dockerignore leaves everything out, then lets back in what COPY needs.
  const ignore = dockerignore
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l && !l.startsWith('#'));
  const allowed = new Set(ignore.filter((l) => l.startsWith('!')).map((l) => l.slice(1).replace(/^\.?\/|\/$/g, '')));
  if (ignore[0] !== '*' && ignore[0] !== '**') problems.push('.dockerignore must start with * and let back in only what the build needs');
  for (const unwanted of ['node_modules', 'dist', '.git', '.env']) {
    if (allowed.has(unwanted)) problems.push(`.dockerignore lets ${unwanted} into the build context`);
  }
  for (const stage of stages) {
    for (const copy of stage.template.getCOPYs()) {
      if (copy.getFromFlag()) continue;
      for (const source of copy
        .getArguments()
        .slice(0, -1)
        .map((a) => a.getValue())) {
        const top = source.replace(/^\.\//, '').split('/')[0] ?? '';
        if (!allowed.has(top)) problems.push(`COPY ${source}: .dockerignore leaves it out of the build context`);
      }
    }
  }
  return problems;
}

describe('Dockerfile', () => {
  const dockerfile = readText('Dockerfile');
  const pkg = JSON.parse(readText('package.json')) as PackageJson;
  const dockerignore = readText('.dockerignore');

  test('lints clean and builds the image the contract asks for', () => {
    assert.deepEqual(checkDockerfile(dockerfile, pkg, dockerignore), []);
  });

  const cases: [string, () => string[], RegExp][] = [
    ['a linter finding', () => checkDockerfile(edit(dockerfile, 'EXPOSE 3000', 'EXPOSE port'), pkg, dockerignore), /Dockerfile line \d+:/],
    ['a single stage', () => checkDockerfile('FROM node:24-bookworm-slim\nUSER 1000\nCMD ["node"]\n', pkg, dockerignore), /multi-stage/],
    [
      'a final stage on Node.js 20',
      () =>
        checkDockerfile(edit(dockerfile, 'FROM node:24-bookworm-slim AS final', 'FROM node:20-bookworm-slim AS final'), pkg, dockerignore),
      /expected node:24/,
    ],
    ['no USER', () => checkDockerfile(edit(dockerfile, 'USER 1000:1000\n', ''), pkg, dockerignore), /not root \(no USER\)/],
    ['USER root', () => checkDockerfile(edit(dockerfile, 'USER 1000:1000\n', 'USER root\n'), pkg, dockerignore), /not root/],
    [
      'USER as a name',
      () => checkDockerfile(edit(dockerfile, 'USER 1000:1000\n', 'USER node\n'), pkg, dockerignore),
      /USER node must be a number/,
    ],
    [
      'the metrics port not exposed',
      () => checkDockerfile(edit(dockerfile, 'EXPOSE 3000 8081 9464\n', 'EXPOSE 3000 8081\n'), pkg, dockerignore),
      /EXPOSE does not list port 9464/,
    ],
    ['no HEALTHCHECK', () => checkDockerfile(edit(dockerfile, /^HEALTHCHECK .*\\\n.*\n/m, ''), pkg, dockerignore), /HEALTHCHECK/],
    [
      'dev dependencies in the image',
      () => checkDockerfile(edit(dockerfile, 'RUN npm ci --omit=dev', 'RUN npm ci'), pkg, dockerignore),
      /npm ci --omit=dev/,
    ],
    ['no build', () => checkDockerfile(edit(dockerfile, 'RUN npm run build', 'RUN true'), pkg, dockerignore), /npm run build/],
    [
      'NODE_ENV not production',
      () => checkDockerfile(edit(dockerfile, 'NODE_ENV=production', 'NODE_ENV=development'), pkg, dockerignore),
      /NODE_ENV=production/,
    ],
    [
      'shell form',
      () =>
        checkDockerfile(
          edit(
            dockerfile,
            'ENTRYPOINT ["node", "--max-semi-space-size=8", "dist/server.js"]',
            'ENTRYPOINT node --max-semi-space-size=8 dist/server.js',
          ),
          pkg,
          dockerignore,
        ),
      /exec form/,
    ],
    [
      'npm start',
      () =>
        checkDockerfile(
          edit(dockerfile, 'ENTRYPOINT ["node", "--max-semi-space-size=8", "dist/server.js"]', 'ENTRYPOINT ["npm", "start"]'),
          pkg,
          dockerignore,
        ),
      /package\.json start runs/,
    ],
    [
      'other Node.js options than npm start',
      () =>
        checkDockerfile(dockerfile, { scripts: { ...pkg.scripts, start: 'node --max-semi-space-size=64 dist/server.js' } }, dockerignore),
      /package\.json start runs/,
    ],
    [
      'a prepare script',
      () => checkDockerfile(dockerfile, { scripts: { ...pkg.scripts, prepare: 'npm run build' } }, dockerignore),
      /prepare script/,
    ],
    ['a source left out of the context', () => checkDockerfile(dockerfile, pkg, edit(dockerignore, '!src/\n', '')), /COPY src/],
    ['node_modules in the context', () => checkDockerfile(dockerfile, pkg, `${dockerignore}!node_modules\n`), /lets node_modules/],
  ];
  for (const [what, run, pattern] of cases) {
    test(`the check reports: ${what}`, () => assertReported(run(), pattern));
  }
});

// ---------------------------------------------------------------------------------------------
// Grafana dashboard

/** The metrics of docs/behaviour.md "Operations" and their labels. */
const CONTRACT_METRICS: Readonly<Record<string, readonly string[]>> = {
  front_proxy_http_request_duration_seconds: ['method', 'route', 'status_code'],
  front_proxy_upstream_request_duration_seconds: ['endpoint', 'method', 'status_class'],
  front_proxy_upstream_errors_total: ['endpoint', 'error'],
  front_proxy_cache_requests_total: ['cache', 'result'],
  front_proxy_rate_limited_total: ['limit'],
  front_proxy_idempotency_decisions_total: ['decision'],
  front_proxy_redis_up: [],
  front_proxy_build_info: ['version', 'build_id'],
  front_proxy_upstream_in_flight: ['endpoint'],
  front_proxy_upstream_rejected_total: ['endpoint', 'reason'],
  front_proxy_circuit_state: ['endpoint'],
  front_proxy_upstream_retries_total: ['endpoint'],
  front_proxy_load_shed_total: [],
  front_proxy_upstream_contract_checks_total: ['endpoint'],
  front_proxy_upstream_contract_findings_total: ['endpoint', 'kind'],
  front_proxy_streams_open: ['kind'],
  front_proxy_streams_ended_total: ['kind', 'reason'],
  front_proxy_stream_duration_seconds: ['kind'],
  front_proxy_http_requests_in_flight: [],
  front_proxy_http_requests_in_flight_limit: [],
  front_proxy_http_open_connections: [],
  front_proxy_http_open_connections_limit: [],
  front_proxy_http_refused_total: ['reason'],
};
const HISTOGRAMS = [
  'front_proxy_http_request_duration_seconds',
  'front_proxy_upstream_request_duration_seconds',
  'front_proxy_stream_duration_seconds',
];
/** Labels Prometheus adds to every series it scrapes (`namespace`: Kubernetes service discovery, the Prometheus Operator). */
const TARGET_LABELS = ['job', 'instance', 'namespace', 'cluster'];

/** The labels of a metric name as queried (histogram series included), or undefined if not the contract's. */
function metricLabels(name: string): readonly string[] | undefined {
  // Prometheus's own series of each target (1: scraped, 0: not): only its target labels.
  if (name === 'up') return [];
  if (/^front_proxy_(process|nodejs)_[a-z0-9_]+$/.test(name)) return undefined;
  const histogram = HISTOGRAMS.find((h) => name === `${h}_bucket` || name === `${h}_count` || name === `${h}_sum`);
  if (histogram) return [...(CONTRACT_METRICS[histogram] ?? []), ...(name.endsWith('_bucket') ? ['le'] : [])];
  return HISTOGRAMS.includes(name) ? undefined : CONTRACT_METRICS[name];
}

/** What a PromQL expression uses. */
interface PromqlFacts {
  readonly problems: string[];
  readonly metrics: string[];
  readonly matchers: { metric: string; label: string; op: string; value: string }[];
  readonly grouping: string[];
  readonly functions: string[];
  divides: boolean;
  /** Whether the whole expression is a comparison (`a > b`, `a == b`…), as an alert's must be. */
  compares: boolean;
}

/** Binary operators that compare (the top of an alerting expression). */
const COMPARISONS = new Set(['Gtr', 'Gte', 'Lss', 'Lte', 'Eql', 'Neq']);

/**
 * How ranges are written: `grafana` (the dashboard) as `[$__rate_interval]`, so Grafana picks one
 * that holds enough scrapes; `fixed` (rule files, which Prometheus evaluates itself) as a duration
 * such as `[5m]`, with no Grafana variable anywhere.
 */
type RangeStyle = 'grafana' | 'fixed';

const unquote = (s: string): string => s.slice(1, -1);

/**
 * Parses `expr` (Grafana's $__rate_interval replaced by a duration) and collects what it uses. Every
 * selector must name a metric and be scoped by a `job` matcher.
 */
function analysePromql(expr: string, ranges: RangeStyle = 'grafana'): PromqlFacts {
  const facts: PromqlFacts = { problems: [], metrics: [], matchers: [], grouping: [], functions: [], divides: false, compares: false };
  const outsideStrings = expr.replace(/"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'|`[^`]*`/g, '""');
  for (const [range] of outsideStrings.matchAll(/\[[^\]]*\]/g)) {
    if (ranges === 'grafana' && range !== '[$__rate_interval]') facts.problems.push(`range ${range} is not [$__rate_interval]`);
    if (ranges === 'fixed' && !/^\[(\d+(ms|s|m|h|d|w|y))+\]$/.test(range)) facts.problems.push(`range ${range} is not a fixed duration`);
  }
  if (ranges === 'fixed' && outsideStrings.includes('$'))
    facts.problems.push('a Grafana variable ($…) in an expression Prometheus evaluates');
  const text = expr.replaceAll('$__rate_interval', '5m');
  const tree = promqlParser.parse(text);
  const created = new Set<string>();
  let parses = true;
  tree.iterate({
    enter: (ref) => {
      if (ref.type.isError) parses = false;
      const node = ref.node;
      const slice = (n: { from: number; to: number }) => text.slice(n.from, n.to);
      switch (ref.name) {
        case 'VectorSelector': {
          const identifier = node.getChild('Identifier');
          if (!identifier) {
            facts.problems.push(`a selector without a metric name: ${slice(node)}`);
            break;
          }
          const metric = slice(identifier);
          facts.metrics.push(metric);
          const matchers = node.getChild('LabelMatchers');
          if (matchers?.getChild('QuotedLabelMatcher')) facts.problems.push(`a quoted label name in ${slice(node)}`);
          let scoped = false;
          for (const m of matchers?.getChildren('UnquotedLabelMatcher') ?? []) {
            const label = m.getChild('LabelName');
            const value = m.getChild('StringLiteral');
            if (label && value)
              facts.matchers.push({
                metric,
                label: slice(label),
                op: text.slice(label.to, value.from).trim(),
                value: unquote(slice(value)),
              });
            if (label && slice(label) === 'job') scoped = true;
          }
          if (!scoped) facts.problems.push(`selector ${slice(node)} is not scoped by a job matcher`);
          break;
        }
        case 'GroupingLabels':
          for (const label of node.getChildren('LabelName')) facts.grouping.push(slice(label));
          break;
        case 'FunctionCall': {
          const name = node.getChild('FunctionIdentifier');
          if (name) facts.functions.push(slice(name));
          if (name && slice(name) === 'label_replace') {
            const strings = node.getChild('FunctionCallBody')?.getChildren('StringLiteral') ?? [];
            const [destination, , source] = strings.map((s) => unquote(slice(s)));
            if (destination) created.add(destination);
            if (source) facts.grouping.push(source);
          }
          break;
        }
        case 'Div':
          facts.divides = true;
          break;
        default:
          break;
      }
    },
  });
  if (!parses) facts.problems.push('does not parse as PromQL');
  const top = tree.topNode.firstChild;
  // The operator of a binary expression is one of its direct children, between its two operands.
  for (let child = top?.name === 'BinaryExpr' ? top.firstChild : null; child; child = child.nextSibling) {
    if (COMPARISONS.has(child.name)) facts.compares = true;
  }
  const known = new Set([...Object.values(CONTRACT_METRICS).flat(), ...TARGET_LABELS, 'le', ...created]);
  for (const label of facts.grouping) if (!known.has(label)) facts.problems.push(`label ${label} is on no metric of the contract`);
  for (const metric of facts.metrics) {
    const labels = metricLabels(metric);
    const standard = /^front_proxy_(process|nodejs)_[a-z0-9_]+$/.test(metric);
    if (!labels && !standard) facts.problems.push(`metric ${metric} is not one of the contract's`);
    for (const m of facts.matchers.filter((x) => x.metric === metric)) {
      if (labels && !labels.includes(m.label) && !TARGET_LABELS.includes(m.label)) {
        facts.problems.push(`metric ${metric} has no label ${m.label}`);
      }
    }
  }
  return facts;
}

interface Target {
  expr?: string;
  datasource?: { type?: string; uid?: string };
}
interface Panel {
  id?: number;
  type?: string;
  title?: string;
  gridPos?: { h: number; w: number; x: number; y: number };
  datasource?: { type?: string; uid?: string };
  targets?: Target[];
  panels?: Panel[];
}
interface Dashboard {
  __inputs?: { name?: string; type?: string; pluginId?: string; label?: string }[];
  __requires?: { type?: string; id?: string }[];
  schemaVersion?: number;
  uid?: string;
  title?: string;
  panels?: Panel[];
  templating?: { list?: { name?: string; type?: string; query?: unknown; definition?: string }[] };
}

/** What one panel of the issue must show: a title and what its query must use. */
interface RequiredPanel {
  readonly title: RegExp;
  readonly metric: string;
  readonly grouping?: readonly string[];
  readonly functions?: readonly string[];
  readonly matcher?: { label: string; value: string };
  readonly ratio?: boolean;
}

const REQUIRED_PANELS: readonly RequiredPanel[] = [
  { title: /request rate/i, metric: 'front_proxy_http_request_duration_seconds_count', functions: ['rate'] },
  { title: /error ratio by EM family/i, metric: 'front_proxy_upstream_errors_total', grouping: ['error'], ratio: true },
  {
    title: /upstream latency per EP/i,
    metric: 'front_proxy_upstream_request_duration_seconds_bucket',
    grouping: ['le', 'endpoint'],
    functions: ['histogram_quantile', 'rate'],
  },
  { title: /cache hit ratio/i, metric: 'front_proxy_cache_requests_total', matcher: { label: 'result', value: 'hit' }, ratio: true },
  { title: /rate.limit/i, metric: 'front_proxy_rate_limited_total', grouping: ['limit'], functions: ['rate'] },
  { title: /idempotency/i, metric: 'front_proxy_idempotency_decisions_total', grouping: ['decision'], functions: ['rate'] },
  { title: /in flight per EP/i, metric: 'front_proxy_upstream_in_flight', grouping: ['endpoint'] },
  {
    title: /rejections by EP and reason/i,
    metric: 'front_proxy_upstream_rejected_total',
    grouping: ['endpoint', 'reason'],
    functions: ['rate'],
  },
  { title: /circuit state per EP/i, metric: 'front_proxy_circuit_state', grouping: ['endpoint'] },
  { title: /open circuits$/i, metric: 'front_proxy_circuit_state', grouping: ['endpoint'] },
  { title: /retries rate/i, metric: 'front_proxy_upstream_retries_total', grouping: ['endpoint'], functions: ['rate'] },
  { title: /retry ratio/i, metric: 'front_proxy_upstream_retries_total', grouping: ['endpoint'], functions: ['rate'], ratio: true },
  { title: /load shed rate/i, metric: 'front_proxy_load_shed_total', functions: ['rate'] },
  {
    title: /upstream contract findings/i,
    metric: 'front_proxy_upstream_contract_findings_total',
    grouping: ['endpoint', 'kind'],
    functions: ['rate'],
    ratio: true,
  },
];

/** The dashboard's facts; an empty list when they hold. */
function checkDashboard(dashboard: Dashboard): string[] {
  const problems: string[] = [];
  if (typeof dashboard.schemaVersion !== 'number' || dashboard.schemaVersion < 36) {
    problems.push(`schemaVersion ${String(dashboard.schemaVersion)}: expected a current one (36 or later)`);
  }
  if (!dashboard.uid || !dashboard.title) problems.push('the dashboard needs a uid and a title');
  const variables = dashboard.templating?.list ?? [];
  // Provisioned dashboards (files, kube-prometheus-stack's sidecar) never fill `__inputs`: only the UI's
  // import does. The data source is a template variable instead, which every way of loading resolves.
  if ((dashboard.__inputs ?? []).length > 0 || JSON.stringify(dashboard).includes('${DS_')) {
    problems.push(
      '__inputs / ${DS_…}: filled only by the UI import; a provisioned dashboard fails with "Datasource ${DS_…} was not found"',
    );
  }
  const typed = variables as { name?: string; type?: string; query?: unknown; definition?: string }[];
  if (!typed.some((v) => v.name === 'datasource' && v.type === 'datasource' && v.query === 'prometheus')) {
    problems.push('no template variable datasource of type datasource (query prometheus)');
  }
  if (!typed.some((v) => v.name === 'namespace' && /label_values\(.*,\s*namespace\)/.test(v.definition ?? '')))
    problems.push('no template variable namespace (label_values of namespace)');
  if (!(dashboard.__requires ?? []).some((r) => r.type === 'datasource' && r.id === 'prometheus'))
    problems.push('__requires does not name the prometheus data source');
  for (const v of variables) {
    const labelValues = /label_values\((\w+)\s*,\s*(\w+)\)/.exec(v.definition ?? '');
    if (labelValues && !metricLabels(labelValues[1] ?? ''))
      problems.push(`variable ${v.name ?? ''} reads ${labelValues[1] ?? ''}, not a metric of the contract`);
  }

  const panels = (dashboard.panels ?? []).flatMap((p) => [p, ...(p.panels ?? [])]);
  const ids = panels.map((p) => p.id);
  if (ids.some((id, i) => id === undefined || ids.indexOf(id) !== i)) problems.push('panel ids must be present and unique');
  const facts = new Map<Panel, PromqlFacts[]>();
  const isDatasource = (d: Target['datasource']) => d?.type === 'prometheus' && d.uid === '${datasource}';
  for (const v of variables as { name?: string; datasource?: Target['datasource'] }[]) {
    if (v.datasource && !isDatasource(v.datasource))
      problems.push(`variable ${v.name ?? ''}: datasource must be the \${datasource} variable`);
  }
  const panelTypes = new Set(panels.map((p) => p.type).filter((t) => t !== 'row'));
  for (const type of panelTypes) {
    if (!(dashboard.__requires ?? []).some((r) => r.type === 'panel' && r.id === type))
      problems.push(`__requires does not name the panel type ${type ?? ''}`);
  }
  for (const panel of panels.filter((p) => p.type !== 'row')) {
    const title = panel.title ?? `panel ${String(panel.id)}`;
    if (!panel.gridPos) problems.push(`${title}: no gridPos`);
    if (!isDatasource(panel.datasource)) problems.push(`${title}: datasource must be the \${datasource} variable`);
    if (!panel.targets?.length) problems.push(`${title}: no query`);
    const list: PromqlFacts[] = [];
    for (const target of panel.targets ?? []) {
      if (target.datasource && !isDatasource(target.datasource)) problems.push(`${title}: a query's datasource is not \${datasource}`);
      if (!target.expr) {
        problems.push(`${title}: a query without expr`);
        continue;
      }
      const f = analysePromql(target.expr);
      problems.push(...f.problems.map((p) => `${title}: ${p} in ${target.expr ?? ''}`));
      const unscoped = new Set(
        f.metrics.filter((m) => !f.matchers.some((x) => x.metric === m && x.label === 'namespace' && x.value === '$namespace')),
      );
      if (unscoped.size > 0) problems.push(`${title}: ${[...unscoped].join(', ')} not scoped by namespace=~"$namespace"`);
      list.push(f);
    }
    facts.set(panel, list);
  }

  for (const required of REQUIRED_PANELS) {
    const panel = [...facts.keys()].find((p) => required.title.test(p.title ?? ''));
    const f = panel ? facts.get(panel) : undefined;
    const uses = f?.some(
      (x) =>
        x.metrics.includes(required.metric) &&
        (required.grouping ?? []).every((l) => x.grouping.includes(l)) &&
        (required.functions ?? []).every((fn) => x.functions.includes(fn)) &&
        (!required.matcher ||
          x.matchers.some(
            (m) => m.metric === required.metric && m.label === required.matcher?.label && m.value === required.matcher.value,
          )) &&
        (!required.ratio || x.divides),
    );
    if (!uses) problems.push(`no panel titled ${required.title} querying ${required.metric} as required`);
  }
  const used = new Set([...facts.values()].flat().flatMap((f) => f.metrics));
  for (const metric of Object.keys(CONTRACT_METRICS)) {
    const series = HISTOGRAMS.includes(metric) ? [`${metric}_bucket`, `${metric}_count`, `${metric}_sum`] : [metric];
    if (!series.some((s) => used.has(s))) problems.push(`no panel shows ${metric}`);
  }
  return problems;
}

describe('Grafana dashboard (deploy/grafana-dashboard.json)', () => {
  const text = readText('deploy/grafana-dashboard.json');
  const dashboard = JSON.parse(text) as Dashboard;

  test('queries parse and use only the contract metrics; the panels of the issue are there', () => {
    assert.deepEqual(checkDashboard(dashboard), []);
  });

  const cases: [string, string, string, RegExp][] = [
    [
      'a metric outside the contract',
      'front_proxy_http_request_duration_seconds_count{job=~\\"$job\\", namespace=~\\"$namespace\\"}[$__rate_interval]))',
      'front_proxy_http_requests_total{job=~\\"$job\\", namespace=~\\"$namespace\\"}[$__rate_interval]))',
      /front_proxy_http_requests_total is not one of the contract's/,
    ],
    ['a label outside the contract', 'sum by (route) (', 'sum by (path) (', /label path is on no metric/],
    [
      'a wrong label on a metric',
      'front_proxy_cache_requests_total{job=~\\"$job\\", namespace=~\\"$namespace\\", result=\\"hit\\"}',
      'front_proxy_cache_requests_total{job=~\\"$job\\", namespace=~\\"$namespace\\", outcome=\\"hit\\"}',
      /front_proxy_cache_requests_total has no label outcome/,
    ],
    ['a syntax error', 'sum by (route) (rate(', 'sum by (route) (rate((', /does not parse/],
    [
      'a fixed range',
      'front_proxy_rate_limited_total{job=~\\"$job\\", namespace=~\\"$namespace\\"}[$__rate_interval]',
      'front_proxy_rate_limited_total{job=~\\"$job\\", namespace=~\\"$namespace\\"}[5m]',
      /range \[5m\]/,
    ],
    ['a fixed datasource', '"uid": "${datasource}"', '"uid": "P1809F7CD0C75ACF3"', /datasource must be/],
    ['an import-only data source input', '"uid": "${datasource}"', '"uid": "${DS_PROMETHEUS}"', /filled only by the UI import/],
    ['no datasource variable', '"name": "datasource"', '"name": "ds"', /no template variable datasource/],
    ['no namespace variable', '"name": "namespace"', '"name": "ns"', /no template variable namespace/],
    [
      'a query not scoped by namespace',
      'front_proxy_load_shed_total{job=~\\"$job\\", namespace=~\\"$namespace\\"}',
      'front_proxy_load_shed_total{job=~\\"$job\\"}',
      /front_proxy_load_shed_total not scoped by namespace/,
    ],
    [
      'a panel type not required',
      '"id": "state-timeline"',
      '"id": "state-timeline-old"',
      /__requires does not name the panel type state-timeline/,
    ],
    ['the cache hit ratio panel missing', '"title": "Cache hit ratio"', '"title": "Cache"', /cache hit ratio/],
    [
      'the EM family grouping missing',
      '\\"error\\", \\"EM00([0-9])[0-9]\\"',
      '\\"endpoint\\", \\"EM00([0-9])[0-9]\\"',
      /error ratio by EM family/,
    ],
    ['an old schema', '"schemaVersion": 39', '"schemaVersion": 16', /schemaVersion 16/],
    ['the in-flight panel missing', '"title": "Upstream in flight per EP"', '"title": "Upstream calls now"', /in flight per EP/],
    [
      'rejections not by reason',
      'sum by (endpoint, reason) (rate(front_proxy_upstream_rejected_total',
      'sum by (endpoint) (rate(front_proxy_upstream_rejected_total',
      /rejections by EP and reason/,
    ],
    [
      'a label the gauge does not have',
      'max by (endpoint) (front_proxy_circuit_state{job=~\\"$job\\", namespace=~\\"$namespace\\"})',
      'max by (endpoint) (front_proxy_circuit_state{job=~\\"$job\\", namespace=~\\"$namespace\\", reason=\\"busy\\"})',
      /front_proxy_circuit_state has no label reason/,
    ],
    [
      'a selector without its job',
      'rate(front_proxy_load_shed_total{job=~\\"$job\\", namespace=~\\"$namespace\\"}[$__rate_interval])) or vector(0)',
      'rate(front_proxy_load_shed_total[$__rate_interval])) or vector(0)',
      /front_proxy_load_shed_total\[?.*not scoped by a job matcher/,
    ],
  ];
  for (const [what, from, to, pattern] of cases) {
    test(`the check reports: ${what}`, () => {
      assertReported(checkDashboard(JSON.parse(edit(text, from, to)) as Dashboard), pattern);
    });
  }

  test('the check reports a contract metric shown by no panel', () => {
    const copy = structuredClone(dashboard);
    copy.panels = copy.panels?.filter((p) => !/redis/i.test(p.title ?? ''));
    assertReported(checkDashboard(copy), /no panel shows front_proxy_redis_up/);
  });
});

// ---------------------------------------------------------------------------------------------
// The contract's metrics as the code exports them

describe('the metric list of these checks', () => {
  test('is what the Metrics registry exports (names and label names), besides the process and Node.js metrics', async () => {
    const metrics = new Metrics({ version: '0', buildId: '0' }, { defaultMetrics: false });
    metrics.watchRedis({ kind: 'redis', up: true });
    const exported = Object.fromEntries(
      (await metrics.registry.getMetricsAsJSON()).map((m) => [
        m.name,
        [...new Set(m.values.flatMap((v) => Object.keys(v.labels)))].filter((l) => l !== 'le'),
      ]),
    );
    // Label names from the registry's own declarations: series without a sample yet have none in values.
    const declared = Object.fromEntries(
      metrics.registry
        .getMetricsAsArray()
        .map((m) => [(m as { name: string }).name, [...((m as { labelNames?: readonly string[] }).labelNames ?? [])].sort()]),
    );
    assert.deepEqual(Object.keys(exported).sort(), Object.keys(CONTRACT_METRICS).sort());
    assert.deepEqual(declared, Object.fromEntries(Object.entries(CONTRACT_METRICS).map(([name, labels]) => [name, [...labels].sort()])));
  });
});

// ---------------------------------------------------------------------------------------------
// Prometheus alerting rules

const RULES_FILE = 'deploy/prometheus-rules.yaml';
/** Severities Alertmanager routes on. */
const SEVERITIES = ['critical', 'warning', 'info'];
/** Keys a Prometheus alerting rule may have. */
const RULE_KEYS = new Set(['alert', 'expr', 'for', 'keep_firing_for', 'labels', 'annotations']);
/** A Prometheus duration: `5m`, `1h30m`, `90s`. */
const DURATION = /^(\d+(ms|s|m|h|d|w|y))+$/;
/** Where runbook links point: a heading of docs/operations.md. */
const RUNBOOK = /\/docs\/operations\.md#([a-z0-9-]+)$/;

/** The anchors GitHub gives the headings of a Markdown text. */
function headingAnchors(markdown: string): Set<string> {
  const anchors = new Set<string>();
  let fenced = false;
  for (const line of markdown.split('\n')) {
    if (/^\s*(```|~~~)/.test(line)) fenced = !fenced;
    const heading = fenced ? null : /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (!heading) continue;
    const base = (heading[1] ?? '')
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\s_-]/gu, '')
      .replace(/\s/g, '-');
    let anchor = base;
    for (let n = 1; anchors.has(anchor); n++) anchor = `${base}-${n}`;
    anchors.add(anchor);
  }
  return anchors;
}

/** What one alert of the issue must be: its name and what its expression must use. */
interface RequiredAlert {
  readonly name: string;
  readonly metric: string;
  readonly grouping?: readonly string[];
  readonly functions?: readonly string[];
  readonly matcher?: { label: string; value: string };
  readonly ratio?: boolean;
}

const REQUIRED_ALERTS: readonly RequiredAlert[] = [
  { name: 'FrontProxyTargetDown', metric: 'up', grouping: ['namespace', 'instance'] },
  {
    name: 'FrontProxyHighLatency',
    metric: 'front_proxy_http_request_duration_seconds_bucket',
    grouping: ['namespace', 'le'],
    functions: ['histogram_quantile', 'rate'],
  },
  { name: 'FrontProxyCircuitOpen', metric: 'front_proxy_circuit_state', grouping: ['namespace', 'endpoint'] },
  { name: 'FrontProxyLoadShedding', metric: 'front_proxy_load_shed_total', grouping: ['namespace'], functions: ['rate'] },
  {
    name: 'FrontProxyHigh5xxRatio',
    metric: 'front_proxy_http_request_duration_seconds_count',
    grouping: ['namespace'],
    matcher: { label: 'status_code', value: '5..' },
    functions: ['rate'],
    ratio: true,
  },
  {
    name: 'FrontProxyUpstreamBusy',
    metric: 'front_proxy_upstream_rejected_total',
    grouping: ['namespace', 'endpoint'],
    matcher: { label: 'reason', value: 'busy' },
    functions: ['rate'],
  },
  { name: 'FrontProxyRedisDown', metric: 'front_proxy_redis_up', grouping: ['namespace', 'instance'] },
  {
    name: 'FrontProxyUpstreamContractDrift',
    metric: 'front_proxy_upstream_contract_findings_total',
    grouping: ['namespace', 'endpoint'],
    matcher: { label: 'kind', value: 'extra' },
    functions: ['rate'],
    ratio: true,
  },
];

/** The rule file's facts (`text` as YAML, runbooks against `operations`, docs/operations.md); an empty list when they hold. */
function checkRules(text: string, operations: string): string[] {
  const problems: string[] = [];
  const doc = parseDocument(text);
  const issues = [...doc.errors, ...doc.warnings].map((e) => `YAML: ${e.message}`);
  if (issues.length > 0) return issues;
  const root = doc.toJS() as { groups?: unknown } | null;
  const groups = root?.groups;
  if (!Array.isArray(groups) || groups.length === 0) return ['no groups: the file must be { groups: [{ name, rules }] }'];
  const anchors = headingAnchors(operations);
  const groupNames = new Set<string>();
  const alerts = new Map<string, PromqlFacts>();
  for (const group of groups as { name?: unknown; rules?: unknown }[]) {
    const name = typeof group.name === 'string' ? group.name : '';
    if (!name) problems.push('a group without a name');
    if (groupNames.has(name)) problems.push(`group ${name} is defined twice`);
    groupNames.add(name);
    if (!Array.isArray(group.rules) || group.rules.length === 0) {
      problems.push(`group ${name}: no rules`);
      continue;
    }
    for (const rule of group.rules as Record<string, unknown>[]) {
      const alert = typeof rule.alert === 'string' ? rule.alert : '';
      const id = alert || `a rule of group ${name}`;
      if (!/^[A-Z][A-Za-z0-9]+$/.test(alert)) problems.push(`${id}: alert must be a CamelCase name (recording rules do not belong here)`);
      if (alerts.has(alert)) problems.push(`${id}: defined twice`);
      for (const key of Object.keys(rule)) if (!RULE_KEYS.has(key)) problems.push(`${id}: unknown key ${key}`);
      for (const key of ['for', 'keep_firing_for']) {
        const value = rule[key];
        if (key === 'for' && value === undefined) problems.push(`${id}: no for (an alert must hold some minutes before it fires)`);
        else if (value !== undefined && (typeof value !== 'string' || !DURATION.test(value)))
          problems.push(`${id}: ${key} ${String(value)} is not a Prometheus duration`);
      }
      const labels = (rule.labels ?? {}) as Record<string, unknown>;
      if (!SEVERITIES.includes(String(labels.severity)))
        problems.push(`${id}: labels.severity ${String(labels.severity)} is not one of ${SEVERITIES.join(', ')}`);
      const annotations = (rule.annotations ?? {}) as Record<string, unknown>;
      for (const key of ['summary', 'description', 'runbook_url']) {
        if (typeof annotations[key] !== 'string' || (annotations[key] as string).trim() === '')
          problems.push(`${id}: no ${key} annotation`);
      }
      if (typeof annotations.runbook_url === 'string') {
        const anchor = RUNBOOK.exec(annotations.runbook_url)?.[1];
        if (!anchor) problems.push(`${id}: runbook_url ${annotations.runbook_url} does not point at a section of docs/operations.md`);
        else if (!anchors.has(anchor)) problems.push(`${id}: runbook_url anchor #${anchor} is no heading of docs/operations.md`);
      }
      if (typeof rule.expr !== 'string' || rule.expr.trim() === '') {
        problems.push(`${id}: no expr`);
        continue;
      }
      const facts = analysePromql(rule.expr, 'fixed');
      problems.push(...facts.problems.map((p) => `${id}: ${p} in ${String(rule.expr)}`));
      if (!facts.compares) problems.push(`${id}: expr is not a comparison (it would fire on every series it returns)`);
      // Every alert keeps the namespace (and cluster): namespaces never add up, and a page says which one.
      for (const label of ['cluster', 'namespace'])
        if (!facts.grouping.includes(label)) problems.push(`${id}: expr does not group by ${label}`);
      alerts.set(alert, facts);
    }
  }
  for (const required of REQUIRED_ALERTS) {
    const x = alerts.get(required.name);
    const uses =
      x !== undefined &&
      x.metrics.includes(required.metric) &&
      (required.grouping ?? []).every((l) => x.grouping.includes(l)) &&
      (required.functions ?? []).every((fn) => x.functions.includes(fn)) &&
      (!required.matcher ||
        x.matchers.some(
          (m) => m.metric === required.metric && m.label === required.matcher?.label && m.value === required.matcher.value,
        )) &&
      (!required.ratio || x.divides);
    if (!uses) problems.push(`no alert ${required.name} on ${required.metric} as required`);
  }
  return problems;
}

describe('Prometheus alerting rules (deploy/prometheus-rules.yaml)', () => {
  const text = readText(RULES_FILE);
  const operations = readText('docs/operations.md');

  test('the rules parse, use only the contract metrics and link to their runbooks; the alerts of the issue are there', () => {
    assert.deepEqual(checkRules(text, operations), []);
  });

  test('FrontProxyRedisDown fires on front_proxy_redis_up == 0 held for 1 minute', () => {
    const groups = (parseDocument(text).toJS() as { groups: { rules: Record<string, string>[] }[] }).groups;
    const rule = groups.flatMap((g) => g.rules).find((r) => r.alert === 'FrontProxyRedisDown');
    assert.equal(rule?.for, '1m');
    assert.match(rule?.expr ?? '', /\(front_proxy_redis_up\{[^}]*\}\) == 0$/);
    assert.equal((rule as unknown as { labels: { severity: string } }).labels.severity, 'critical');
  });

  test('GitHub anchors of headings, as the runbook links use them', () => {
    const anchors = headingAnchors(
      '# Operations\n## Metrics: `METRICS_PORT`\n```\n# not a heading\n```\n### Alert: FrontProxyCircuitOpen\n## Tests\n## Tests\n',
    );
    assert.deepEqual([...anchors], ['operations', 'metrics-metrics_port', 'alert-frontproxycircuitopen', 'tests', 'tests-1']);
  });

  const cases: [string, string | RegExp, string, RegExp][] = [
    ['not YAML', 'groups:\n', 'groups:\n\t- oops: [\n', /YAML/],
    [
      'a syntax error in an expression',
      'max by (cluster, namespace, endpoint) (front_proxy_circuit_state{job=~"front-proxy.*"}) >= 1',
      'max by (cluster, namespace, endpoint) (front_proxy_circuit_state{job=~"front-proxy.*"} >= 1',
      /FrontProxyCircuitOpen: does not parse/,
    ],
    [
      'a metric outside the contract',
      'rate(front_proxy_load_shed_total{job=~"front-proxy.*"}[5m])',
      'rate(front_proxy_requests_shed_total{job=~"front-proxy.*"}[5m])',
      /front_proxy_requests_shed_total is not one of the contract's/,
    ],
    ['a label the metric does not have', 'reason="busy"', 'cause="busy"', /front_proxy_upstream_rejected_total has no label cause/],
    [
      'a grouping label on no metric',
      'sum by (cluster, namespace, instance) (rate(front_proxy_load_shed_total',
      'sum by (cluster, namespace, pod) (rate(front_proxy_load_shed_total',
      /label pod is on no metric/,
    ],
    [
      'a Grafana range',
      'rate(front_proxy_load_shed_total{job=~"front-proxy.*"}[5m])',
      'rate(front_proxy_load_shed_total{job=~"front-proxy.*"}[$__rate_interval])',
      /range \[\$__rate_interval\] is not a fixed duration/,
    ],
    [
      'a selector without its job',
      'rate(front_proxy_load_shed_total{job=~"front-proxy.*"}[5m])',
      'rate(front_proxy_load_shed_total[5m])',
      /not scoped by a job matcher/,
    ],
    [
      'no comparison',
      'sum by (cluster, namespace, instance) (rate(front_proxy_load_shed_total{job=~"front-proxy.*"}[5m])) > 0',
      'sum by (cluster, namespace, instance) (rate(front_proxy_load_shed_total{job=~"front-proxy.*"}[5m]))',
      /FrontProxyLoadShedding: expr is not a comparison/,
    ],
    ['a malformed for', 'for: 5m', 'for: 5 minutes', /for 5 minutes is not a Prometheus duration/],
    ['no for', /\n {8}for: 10m\n/, '\n', /no for/],
    ['an unknown severity', 'severity: critical', 'severity: page', /severity page is not one of/],
    ['no runbook_url', /\n {10}runbook_url: \S+#alert-frontproxyloadshedding\n/, '\n', /FrontProxyLoadShedding: no runbook_url/],
    ['a runbook anchor the docs do not have', '#alert-frontproxycircuitopen', '#circuit-open', /anchor #circuit-open is no heading/],
    ['an unknown key', 'for: 5m', 'for: 5m\n        severity: critical', /unknown key severity/],
    [
      'an alert defined twice',
      'alert: FrontProxyUpstreamRetriesHigh',
      'alert: FrontProxyUpstreamBusy',
      /FrontProxyUpstreamBusy: defined twice/,
    ],
    ['the circuit alert missing', 'alert: FrontProxyCircuitOpen', 'alert: FrontProxyCircuitBroken', /no alert FrontProxyCircuitOpen/],
    ['the 5xx alert without its status matcher', 'status_code=~"5.."', 'status_code=~"4.."', /no alert FrontProxyHigh5xxRatio/],
    ['the Redis alert missing', 'alert: FrontProxyRedisDown', 'alert: FrontProxyRedisLost', /no alert FrontProxyRedisDown/],
    [
      'an alert summed over namespaces',
      /sum by \(cluster, namespace\) \(rate\(front_proxy_http_request_duration_seconds_count/g,
      'sum(rate(front_proxy_http_request_duration_seconds_count',
      /FrontProxyHigh5xxRatio: expr does not group by namespace/,
    ],
    ['the target-down alert missing', 'alert: FrontProxyTargetDown', 'alert: FrontProxyGone', /no alert FrontProxyTargetDown/],
    ['the latency alert missing', 'alert: FrontProxyHighLatency', 'alert: FrontProxySlow', /no alert FrontProxyHighLatency/],
  ];
  for (const [what, from, to, pattern] of cases) {
    test(`the check reports: ${what}`, () => assertReported(checkRules(edit(text, from, to), operations), pattern));
  }

  test(
    'promtool check rules and promtool test rules pass (deploy/prometheus-rules.test.yaml: every alert firing and silent)',
    { skip: NEEDS_PROMTOOL },
    () => {
      const check = spawnSync('promtool', ['check', 'rules', RULES_FILE], { encoding: 'utf8', timeout: 30_000 });
      assert.equal(check.status, 0, `${check.stdout}${check.stderr}`);
      const unit = spawnSync('promtool', ['test', 'rules', 'deploy/prometheus-rules.test.yaml'], { encoding: 'utf8', timeout: 60_000 });
      assert.equal(unit.status, 0, `${unit.stdout}${unit.stderr}`);
      // Every alert of the rule file has a case in the unit tests.
      const tests = readText('deploy/prometheus-rules.test.yaml');
      for (const name of alertExpressions((parseDocument(text).toJS() as { groups: unknown }).groups).keys()) {
        assert.ok(tests.includes(`alertname: ${name}\n`), `no promtool case for ${name}`);
      }
    },
  );

  test('the check reports a runbook section removed from docs/operations.md', () => {
    assertReported(
      checkRules(text, edit(operations, '### Alert: FrontProxyHigh5xxRatio', '### High 5xx ratio')),
      /anchor #alert-frontproxyhigh5xxratio is no heading/,
    );
  });
});

// ---------------------------------------------------------------------------------------------
// Prometheus Operator: ServiceMonitor and PrometheusRule (deploy/kubernetes/)

/** The namespace the checks below apply the manifests in (they name none: `kubectl -n` decides). */
const NAMESPACE = 'shop-production';

/** One series as Prometheus stores it: the scraped name and labels plus the target's. */
interface Series {
  readonly name: string;
  readonly labels: Readonly<Record<string, string>>;
}

/** The labels the Prometheus Operator gives the targets of `monitor`'s endpoint on `service` (its generated relabelling). */
function operatorTargetLabels(monitor: IServiceMonitor, service: IService, port: string): Record<string, string> {
  const jobLabel = monitor.spec.jobLabel;
  return {
    job: (jobLabel && service.metadata?.labels?.[jobLabel]) || (service.metadata?.name ?? ''),
    namespace: service.metadata?.namespace ?? NAMESPACE,
    service: service.metadata?.name ?? '',
    endpoint: port,
    pod: 'front-proxy-7d9c5b6f4-x2x9q',
    container: 'front-proxy',
    instance: '10.1.2.3:9464',
  };
}

/** Labels scraped from the target and the target's, merged as Prometheus does (`honor` keeps the scraped value, else `exported_…`). */
function attach(scraped: Series, target: Record<string, string>, honor: boolean): Series {
  const labels: Record<string, string> = {};
  for (const [name, value] of Object.entries(scraped.labels)) {
    if (name in target && !honor) labels[`exported_${name}`] = value;
    else labels[name] = value;
  }
  for (const [name, value] of Object.entries(target)) if (!(name in scraped.labels) || !honor) labels[name] = value;
  return { name: scraped.name, labels };
}

/** One `metricRelabelings` rule of a ServiceMonitor endpoint, of the two actions the manifest uses. */
interface Relabeling {
  sourceLabels?: string[];
  regex?: string;
  targetLabel?: string;
  replacement?: string;
  action?: string;
}

/** A series after the `replace` and `labeldrop` rules of `rules`, as Prometheus applies them (anchored regexes, `;` joining). */
function relabelled(series: Series, rules: readonly Relabeling[]): Series {
  const labels = { ...series.labels };
  for (const rule of rules) {
    const regex = new RegExp(`^(?:${rule.regex ?? '(.*)'})$`);
    if ((rule.action ?? 'replace') === 'labeldrop') {
      for (const name of Object.keys(labels)) if (regex.test(name)) delete labels[name];
      continue;
    }
    const value = (rule.sourceLabels ?? []).map((name) => labels[name] ?? '').join(';');
    const match = regex.exec(value);
    if (match && rule.targetLabel)
      labels[rule.targetLabel] = (rule.replacement ?? '$1').replace(/\$(\d)/g, (_m, i: string) => match[Number(i)] ?? '');
  }
  return { name: series.name, labels };
}

/** Whether `value` satisfies the PromQL matcher `op` `pattern` (regular expressions are fully anchored). */
function matches(op: string, pattern: string, value: string): boolean {
  const regex = () => new RegExp(`^(?:${pattern})$`);
  switch (op) {
    case '=':
      return value === pattern;
    case '!=':
      return value !== pattern;
    case '=~':
      return regex().test(value);
    case '!~':
      return !regex().test(value);
    default:
      return false;
  }
}

/** The series of an exposition text (comments skipped). */
function parseExposition(text: string): Series[] {
  const out: Series[] = [];
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? \S+$/.exec(line);
    if (!match) continue;
    const labels: Record<string, string> = {};
    for (const pair of (match[2] ?? '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g))
      labels[pair[1] as string] = (pair[2] as string).replace(/\\(.)/g, '$1');
    out.push({ name: match[1] as string, labels });
  }
  return out;
}

/** The alert rules of a rule file's text, by alert name. */
function alertExpressions(groups: unknown): Map<string, string> {
  const out = new Map<string, string>();
  for (const group of (groups ?? []) as { rules?: { alert?: string; expr?: string }[] }[]) {
    for (const rule of group.rules ?? []) if (rule.alert && rule.expr) out.set(rule.alert, rule.expr);
  }
  return out;
}

/**
 * The Operator objects' facts: the ServiceMonitor selects the metrics Service and names its port,
 * keeps the proxy's `endpoint` label (its metric relabelings, no `honorLabels`); every selector of every alert of the PrometheusRule matches
 * at least one of `series` (a real scrape) once labelled as the ServiceMonitor's targets are; and the
 * PrometheusRule holds the groups of deploy/prometheus-rules.yaml. An empty list when they hold.
 */
function checkOperatorObjects(manifests: readonly Manifest[], rulesFile: string, scraped: readonly Series[]): string[] {
  const problems: string[] = [];
  const of = <T>(kind: string): T[] => manifests.filter((m) => m.object.kind === kind).map((m) => m.object as T);
  const monitors = of<IServiceMonitor>('ServiceMonitor');
  const rules = of<{ spec?: { groups?: unknown } }>('PrometheusRule');
  if (monitors.length !== 1 || rules.length !== 1)
    return [`expected one ServiceMonitor and one PrometheusRule, found ${monitors.length} and ${rules.length}`];
  const monitor = monitors[0] as IServiceMonitor;
  const services = of<IService>('Service').filter((s) => selects(monitor.spec.selector.matchLabels, s.metadata?.labels));
  if (services.length !== 1)
    return [...problems, `the ServiceMonitor selects ${services.length} Services, expected the metrics Service alone`];
  const service = services[0] as IService;
  if (service.spec?.ports?.some((p) => p.name === 'http'))
    problems.push(`the ServiceMonitor selects ${service.metadata?.name ?? ''}, which serves the public port`);
  if (
    monitor.spec.namespaceSelector &&
    !monitor.spec.namespaceSelector.matchNames?.includes(NAMESPACE) &&
    !monitor.spec.namespaceSelector.any
  ) {
    problems.push('the ServiceMonitor looks in other namespaces than its own, where the Service is');
  }
  const endpoints = monitor.spec.endpoints ?? [];
  if (endpoints.length !== 1) problems.push(`the ServiceMonitor has ${endpoints.length} endpoints, expected one`);
  const endpoint = endpoints[0];
  if (!endpoint?.port || !service.spec?.ports?.some((p) => p.name === endpoint.port))
    problems.push(`the ServiceMonitor's port ${endpoint?.port ?? '(none)'} is no port name of ${service.metadata?.name ?? ''}`);
  if ((endpoint?.path ?? '/metrics') !== '/metrics') problems.push(`the ServiceMonitor scrapes ${endpoint?.path ?? ''}, not /metrics`);
  if (endpoint?.honorLabels === true)
    problems.push('honorLabels must not be set: a scraped series could claim any target label (job, namespace, instance)');
  const target = operatorTargetLabels(monitor, service, endpoint?.port ?? '');
  // Prometheus adds `up` (1: scraped, 0: not) to every target, with the target's labels only.
  const relabel = (s: Series): Series => relabelled(s, (endpoint?.metricRelabelings ?? []) as Relabeling[]);
  const series = [...scraped, { name: 'up', labels: {} }].map((s) => relabel(attach(s, target, endpoint?.honorLabels === true)));
  const epSeries = scraped.filter((s) => /^EP\d{4}$/.test(s.labels.endpoint ?? ''));
  const kept = epSeries.every((s) => {
    const out = relabel(attach(s, target, endpoint?.honorLabels === true));
    return out.labels.endpoint === s.labels.endpoint && !('exported_endpoint' in out.labels);
  });
  if (epSeries.length === 0 || !kept)
    problems.push(
      "the proxy's EP-code label endpoint does not survive the scrape: the target label endpoint renames it to exported_endpoint",
    );

  const fileGroups = (parseDocument(rulesFile).toJS() as { groups?: unknown } | null)?.groups;
  const rule = rules[0] as { spec?: { groups?: unknown } };
  if (JSON.stringify(rule.spec?.groups) !== JSON.stringify(fileGroups))
    problems.push('the PrometheusRule does not hold the groups of deploy/prometheus-rules.yaml');
  for (const [alert, expr] of alertExpressions(rule.spec?.groups)) {
    const facts = analysePromql(expr, 'fixed');
    for (const metric of new Set(facts.metrics)) {
      const wanted = facts.matchers.filter((m) => m.metric === metric);
      const found = series.some((s) => s.name === metric && wanted.every((m) => matches(m.op, m.value, s.labels[m.label] ?? '')));
      if (!found) {
        const scope = wanted.map((m) => `${m.label}${m.op}"${m.value}"`).join(', ');
        problems.push(
          `${alert}: no scraped series ${metric}{${scope}} (target labels job="${target.job}", namespace="${target.namespace}")`,
        );
      }
    }
    for (const m of facts.matchers.filter((x) => x.label === 'job' || x.label === 'namespace')) {
      if (!matches(m.op, m.value, target[m.label] ?? ''))
        problems.push(`${alert}: ${m.label}${m.op}"${m.value}" does not match the ServiceMonitor's ${m.label} "${target[m.label] ?? ''}"`);
    }
  }
  return problems;
}

describe(
  'Prometheus Operator objects (deploy/kubernetes/servicemonitor.yaml, prometheusrule.yaml)',
  { skip: HAVE_REDIS ? false : 'redis-server is not installed (.ci/run installs it)' },
  () => {
    const manifests = loadManifests();
    const rulesFile = readText(RULES_FILE);
    let scraped: Series[] = [];

    test('a real scrape of GET /metrics, after traffic that makes every series of the alerts', async () => {
      const redis = await startRedis();
      const upstream = await startRecordingUpstream();
      // Every BFF answer checked, so the contract-check series exist (the findings' start at 0).
      const proxy = await startProxy(upstream.url, { METRICS_PORT: '0', REDIS_URL: redis.url, UPSTREAM_CONTRACT_SAMPLE: '1' });
      const metrics = proxy.app.metrics;
      assert.ok(metrics, 'METRICS_PORT builds the metrics');
      const server = await startMetricsServer(0, '127.0.0.1', metrics);
      try {
        upstream.on('GET', '/casino-games/list/', { json: { data: [] } });
        upstream.on('GET', '/wallet/charge/tx-deploy-1', {
          status: 503,
          json: { reason: 'maintenance window', message: 'Service temporarily unavailable' },
        });
        assert.equal((await send(proxy.url, 'GET', '/api/games/list?page=1')).status, 200);
        const outage = await send(proxy.url, 'GET', '/api/payments/deposit-status?transactionId=tx-deploy-1', {
          token: fakeJwt({ sub: '7' }),
        });
        assert.ok(outage.status >= 500, `a 5xx answer, got ${outage.status}`);
        assert.equal((await send(proxy.url, 'GET', '/api/no-such-route')).status, 404);
        const res = await fetch(`${server.url}/metrics`);
        assert.equal(res.status, 200);
        scraped = parseExposition(await res.text());
      } finally {
        await server.close();
        await proxy.close();
        await upstream.close();
        await redis.stop();
      }
      assert.ok(scraped.some((s) => s.name === 'front_proxy_redis_up'));
    });

    test('the ServiceMonitor scrapes the metrics Service; every alert of the PrometheusRule selects series it produces', () => {
      assert.deepEqual(checkOperatorObjects(manifests, rulesFile, scraped), []);
    });

    const edited = (file: string, from: string | RegExp, to: string): Manifest[] => {
      const others = manifests.filter((m) => m.file !== file);
      const object = parseDocument(edit(readText(file), from, to)).toJS() as Record<string, unknown>;
      return [...others, { file, object }];
    };
    const MONITOR = `${MANIFEST_DIR}/servicemonitor.yaml`;
    const RULE = `${MANIFEST_DIR}/prometheusrule.yaml`;
    const cases: [string, () => string[], RegExp][] = [
      [
        'a job the rules do not select',
        () =>
          checkOperatorObjects(
            edited(MONITOR, 'jobLabel: app.kubernetes.io/name', 'jobLabel: app.kubernetes.io/component'),
            rulesFile,
            scraped,
          ),
        /job=~"front-proxy\.\*" does not match the ServiceMonitor's job "proxy-metrics"/,
      ],
      [
        'the public Service selected',
        () =>
          checkOperatorObjects(
            edited(MONITOR, 'app.kubernetes.io/component: proxy-metrics', 'app.kubernetes.io/component: proxy'),
            rulesFile,
            scraped,
          ),
        /serves the public port/,
      ],
      [
        'a port the Service does not name',
        () => checkOperatorObjects(edited(MONITOR, '- port: metrics', '- port: prometheus'), rulesFile, scraped),
        /port prometheus is no port name/,
      ],
      [
        'the target label endpoint winning',
        () => checkOperatorObjects(edited(MONITOR, / {6}metricRelabelings:[\s\S]*$/, ''), rulesFile, scraped),
        /EP-code label endpoint does not survive the scrape/,
      ],
      [
        'honorLabels',
        () =>
          checkOperatorObjects(edited(MONITOR, 'scrapeTimeout: 10s', 'scrapeTimeout: 10s\n      honorLabels: true'), rulesFile, scraped),
        /honorLabels must not be set/,
      ],
      [
        "another namespace than the Service's",
        () =>
          checkOperatorObjects(
            edited(
              RULE,
              'min by (cluster, namespace, instance) (front_proxy_redis_up{job=~"front-proxy.*"})',
              'min by (cluster, namespace, instance) (front_proxy_redis_up{job=~"front-proxy.*", namespace="monitoring"})',
            ),
            rulesFile,
            scraped,
          ),
        /FrontProxyRedisDown: namespace="monitoring" does not match the ServiceMonitor's namespace/,
      ],
      [
        'a series the proxy does not export',
        () => checkOperatorObjects(edited(RULE, 'front_proxy_redis_up{job', 'redis_up{job'), rulesFile, scraped),
        /FrontProxyRedisDown: no scraped series redis_up/,
      ],
      [
        'rules that differ from the rule file',
        () => checkOperatorObjects(edited(RULE, 'for: 1m', 'for: 2m'), rulesFile, scraped),
        /does not hold the groups of deploy\/prometheus-rules\.yaml/,
      ],
    ];
    for (const [what, run, pattern] of cases) {
      test(`the check reports: ${what}`, () => assertReported(run(), pattern));
    }

    test('matchers as Prometheus applies them', () => {
      const table: [string, string, string, boolean][] = [
        ['=', 'front-proxy', 'front-proxy', true],
        ['=~', 'front-proxy.*', 'front-proxy', true],
        ['=~', 'front-proxy.*', 'my-front-proxy', false],
        ['!=', 'a', 'b', true],
        ['!~', '5..', '503', false],
        ['=~', '5..', '5030', false],
      ];
      for (const [op, pattern, value, expected] of table) assert.equal(matches(op, pattern, value), expected, `${value} ${op} ${pattern}`);
    });
  },
);
