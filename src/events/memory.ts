// The in-process event bus: the default when Kiln runs as one process.
import type { EventBus, KilnEvent, Listener } from './bus.ts';

export class MemoryEventBus implements EventBus {
  private listeners = new Map<string, Set<Listener>>();

  async publish(channel: string, message: KilnEvent): Promise<void> {
    this.deliver(channel, message);
  }

  /** Calls every local listener of a channel; one listener's failure never stops the others. */
  deliver(channel: string, message: KilnEvent): void {
    const set = this.listeners.get(channel);
    if (!set) return;
    for (const fn of [...set]) {
      try {
        fn(message);
      } catch (err) {
        console.error('event listener failed:', err);
      }
    }
  }

  subscribe(channel: string, listener: Listener): () => void {
    let set = this.listeners.get(channel);
    if (!set) this.listeners.set(channel, (set = new Set()));
    set.add(listener);
    return () => {
      set!.delete(listener);
      if (set!.size === 0 && this.listeners.get(channel) === set) this.listeners.delete(channel);
    };
  }

  hasListeners(channel: string): boolean {
    return this.listeners.has(channel);
  }

  async close(): Promise<void> {
    this.listeners.clear();
  }
}
