/** Span and metric attribute keys used by the runtime and the services, in one place. */
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
  /** A task's id (its BullMQ job id, `merge/<table key>`). */
  icepackTaskId: 'icepack.task.id',
  /** The catalog's BullMQ queue a task waits in. */
  icepackQueue: 'icepack.queue',
  /** The BullMQ priority a task was enqueued with (lower runs first). */
  icepackTaskPriority: 'icepack.task.priority',
  /** What the planner did with a task in the queue (`EnqueueOutcome`). */
  icepackEnqueueOutcome: 'icepack.enqueue.outcome',
} as const;
