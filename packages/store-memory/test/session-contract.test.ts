import { SessionContract } from "@dropshelf/core/testing"
import { StoreMemory } from "@dropshelf/store-memory"

SessionContract.suite("memory", StoreMemory.layerStores)
