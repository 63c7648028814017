import { SecurityLogContract } from "@dropshelf/core/testing"
import { StoreMemory } from "@dropshelf/store-memory"

SecurityLogContract.suite("memory", StoreMemory.layerStores)
