import { CoreV1Api, CustomObjectsApi, makeInformer, Watch } from '@kubernetes/client-node';
import type { V1ConfigMap } from '@kubernetes/client-node';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startFakeKubeApi } from './fake-kube-api.ts';
import type { FakeKubeApi } from './fake-kube-api.ts';
import { kubeConfigFor } from './kube-config.ts';

interface Seen {
  readonly type: string;
  readonly name: string;
  readonly rv: string;
  readonly state?: string;
}

/** Starts a client-node Watch and collects its events until `stop()`. */
async function collect(api: FakeKubeApi, path: string, query: Record<string, string> = {}) {
  const events: Seen[] = [];
  let ended: unknown = 'open';
  const controller = await new Watch(kubeConfigFor(api.url)).watch(
    path,
    query,
    (
      type,
      object: {
        metadata: { name: string; resourceVersion: string };
        status?: { applicationState?: { state?: string } };
      },
    ) => {
      events.push({
        type,
        name: object.metadata.name,
        rv: object.metadata.resourceVersion,
        ...(object.status?.applicationState?.state === undefined
          ? {}
          : { state: object.status.applicationState.state }),
      });
    },
    (error) => {
      ended = error;
    },
  );
  return { events, ended: () => ended, stop: () => controller.abort() };
}

async function until(check: () => boolean): Promise<void> {
  for (let i = 0; i < 200 && !check(); i += 1)
    await new Promise((resolve) => setTimeout(resolve, 10));
  expect(check()).toBe(true);
}

let api: FakeKubeApi;
let core: CoreV1Api;

beforeEach(async () => {
  api = await startFakeKubeApi();
  core = kubeConfigFor(api.url).makeApiClient(CoreV1Api);
  await core.createNamespace({ body: { metadata: { name: 'team' } } });
});

afterEach(async () => {
  await api.stop();
});

describe('fake API server: watch', () => {
  it('streams ADDED, MODIFIED and DELETED of SparkApplications, status included', async () => {
    const custom = kubeConfigFor(api.url).makeApiClient(CustomObjectsApi);
    const target = {
      group: 'sparkoperator.k8s.io',
      version: 'v1beta2',
      plural: 'sparkapplications',
      namespace: 'team',
    };
    const watch = await collect(
      api,
      '/apis/sparkoperator.k8s.io/v1beta2/namespaces/team/sparkapplications',
    );
    const app = (await custom.createNamespacedCustomObject({
      ...target,
      body: {
        apiVersion: 'sparkoperator.k8s.io/v1beta2',
        kind: 'SparkApplication',
        metadata: { name: 'job' },
        spec: { type: 'Python' },
      },
    })) as Record<string, unknown>;
    await custom.replaceNamespacedCustomObjectStatus({
      ...target,
      name: 'job',
      body: { ...app, status: { applicationState: { state: 'RUNNING' } } },
    });
    await custom.deleteNamespacedCustomObject({ ...target, name: 'job' });
    await until(() => watch.events.length === 3);
    expect(watch.events.map((e) => [e.type, e.name, e.state])).toEqual([
      ['ADDED', 'job', undefined],
      ['MODIFIED', 'job', 'RUNNING'],
      ['DELETED', 'job', 'RUNNING'],
    ]);
    const versions = watch.events.map((e) => Number(e.rv));
    expect([...versions].sort((a, b) => a - b)).toEqual(versions);
    watch.stop();
  });

  it('replays what happened after a resourceVersion, and only that', async () => {
    await core.createNamespacedConfigMap({
      namespace: 'team',
      body: { metadata: { name: 'before' } },
    });
    const { metadata } = await core.listNamespacedConfigMap({ namespace: 'team' });
    await core.createNamespacedConfigMap({
      namespace: 'team',
      body: { metadata: { name: 'after' } },
    });
    await core.deleteNamespacedConfigMap({ name: 'before', namespace: 'team' });
    const watch = await collect(api, '/api/v1/namespaces/team/configmaps', {
      resourceVersion: metadata?.resourceVersion ?? '',
    });
    await until(() => watch.events.length === 2);
    expect(watch.events.map((e) => [e.type, e.name])).toEqual([
      ['ADDED', 'after'],
      ['DELETED', 'before'],
    ]);
    watch.stop();
  });

  it('starts with the current objects when no resourceVersion is given, filtered by label', async () => {
    await core.createNamespacedConfigMap({
      namespace: 'team',
      body: { metadata: { name: 'mine', labels: { owner: 'me' } } },
    });
    await core.createNamespacedConfigMap({
      namespace: 'team',
      body: { metadata: { name: 'theirs', labels: { owner: 'you' } } },
    });
    const watch = await collect(api, '/api/v1/namespaces/team/configmaps', {
      labelSelector: 'owner=me',
    });
    await until(() => watch.events.length === 1);
    // A relabelled object leaves the watch as DELETED, as with the real server.
    await core.patchNamespacedConfigMap({
      name: 'mine',
      namespace: 'team',
      body: [{ op: 'replace', path: '/metadata/labels/owner', value: 'you' }],
    });
    await until(() => watch.events.length === 2);
    expect(watch.events.map((e) => [e.type, e.name])).toEqual([
      ['ADDED', 'mine'],
      ['DELETED', 'mine'],
    ]);
    watch.stop();
  });

  it('feeds a client-node informer that lists, then watches', async () => {
    const kc = kubeConfigFor(api.url);
    const informer = makeInformer<V1ConfigMap>(kc, '/api/v1/namespaces/team/configmaps', () =>
      core.listNamespacedConfigMap({ namespace: 'team' }),
    );
    const added: string[] = [];
    informer.on('add', (object) => added.push(object.metadata?.name ?? ''));
    await core.createNamespacedConfigMap({
      namespace: 'team',
      body: { metadata: { name: 'first' } },
    });
    await informer.start();
    await core.createNamespacedConfigMap({
      namespace: 'team',
      body: { metadata: { name: 'second' } },
    });
    await until(() => added.length === 2);
    expect(added).toEqual(['first', 'second']);
    expect(
      informer
        .list()
        .map((object) => object.metadata?.name)
        .sort(),
    ).toEqual(['first', 'second']);
    await informer.stop();
  });
});
