import { runGroup } from './runGroup.js';
import { GROUPS } from './table.js';

runGroup('surfaces', GROUPS.surfaces);
