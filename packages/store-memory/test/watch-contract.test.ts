import { WatchContract } from "@dropshelf/core/testing"
import { StoreMemory } from "@dropshelf/store-memory"

WatchContract.suite("memory", StoreMemory.layerStores)
