import type { EnvelopeProducer } from '@icepack/runtime';
import type { Binding, Catalog } from '@icepack/types';
import { MessageType, Topics } from '@icepack/types';

/** What the provisioner tells the rest of Icepack, on compacted topics keyed by name. */
export interface Publisher {
  publishCatalog(catalog: Catalog): Promise<void>;
  tombstoneCatalog(name: string): Promise<void>;
  /** Keyed by catalog: dispatchers look bindings up by the catalog whose queue they serve. */
  publishBinding(binding: Binding): Promise<void>;
  tombstoneBinding(catalog: string): Promise<void>;
}

export class KafkaPublisher implements Publisher {
  readonly #producer: EnvelopeProducer;

  constructor(producer: EnvelopeProducer) {
    this.#producer = producer;
  }

  async publishCatalog(catalog: Catalog): Promise<void> {
    await this.#producer.publish(
      Topics.catalogs,
      MessageType.CatalogDefined,
      catalog.name,
      catalog,
    );
  }

  async tombstoneCatalog(name: string): Promise<void> {
    await this.#producer.tombstone(Topics.catalogs, name);
  }

  async publishBinding(binding: Binding): Promise<void> {
    await this.#producer.publish(
      Topics.bindings,
      MessageType.BindingUpdated,
      binding.catalog,
      binding,
    );
  }

  async tombstoneBinding(catalog: string): Promise<void> {
    await this.#producer.tombstone(Topics.bindings, catalog);
  }
}
