import { describe, expect, it } from 'vitest';
import { ForeignNamespaceError, ownershipOf } from './ownership.ts';
import { ConflictError } from './errors.ts';

const managed = { 'app.kubernetes.io/managed-by': 'icepack' };
const ours = { 'icepack.io/installation': 'prod' };

describe('namespace ownership', () => {
  it('is absent without a namespace, owned with the label and this installation annotation', () => {
    expect(ownershipOf(undefined, 'prod')).toEqual({ kind: 'absent' });
    expect(ownershipOf({ labels: managed, annotations: ours }, 'prod')).toEqual({ kind: 'owned' });
  });

  it('is foreign without the managed-by label, whatever the annotation says', () => {
    expect(ownershipOf({}, 'prod')).toEqual({
      kind: 'foreign',
      reason: 'it has no label app.kubernetes.io/managed-by=icepack',
    });
    expect(
      ownershipOf(
        { labels: { 'app.kubernetes.io/managed-by': 'helm' }, annotations: ours },
        'prod',
      ),
    ).toEqual({
      kind: 'foreign',
      reason: 'its label app.kubernetes.io/managed-by is "helm", not "icepack"',
    });
  });

  it('is foreign with the label but without this installation annotation', () => {
    expect(ownershipOf({ labels: managed }, 'prod')).toEqual({
      kind: 'foreign',
      reason: 'it has no annotation icepack.io/installation',
    });
    expect(
      ownershipOf(
        { labels: managed, annotations: { 'icepack.io/installation': 'staging' } },
        'prod',
      ),
    ).toEqual({
      kind: 'foreign',
      reason: 'its annotation icepack.io/installation names installation "staging"',
    });
  });

  it('refuses with a conflict naming the namespace, the reason and how to resolve it', () => {
    const error = new ForeignNamespaceError('icepack-sales', 'prod', 'it has no label x');
    expect(error).toBeInstanceOf(ConflictError);
    expect(error.namespace).toBe('icepack-sales');
    expect(error.message).toBe(
      'namespace "icepack-sales" already exists and is not owned by this Icepack installation ("prod"): ' +
        'it has no label x. Icepack neither adopts nor deletes it; choose another group name, or remove ' +
        "the namespace, or mark it as this installation's (label app.kubernetes.io/managed-by=icepack, " +
        'annotation icepack.io/installation=prod)',
    );
  });
});
