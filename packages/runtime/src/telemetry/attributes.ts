/** Span and metric attribute keys used by the runtime, in one place (OTel semconv names). */
export const Attr = {
  messagingSystem: 'messaging.system',
  messagingOperation: 'messaging.operation.type',
  messagingDestination: 'messaging.destination.name',
  messagingConsumerGroup: 'messaging.consumer.group.name',
  messagingMessageId: 'messaging.message.id',
  kafkaMessageKey: 'messaging.kafka.message.key',
  kafkaPartition: 'messaging.destination.partition.id',
  kafkaOffset: 'messaging.kafka.offset',
  icepackMessageType: 'icepack.message.type',
  icepackOutcome: 'icepack.message.outcome',
  icepackAttempt: 'icepack.message.attempt',
  /** Why a message was dead-lettered, as a class (`DlqReason`), never the free-text reason. */
  icepackDlqReason: 'icepack.dlq.reason',
} as const;
