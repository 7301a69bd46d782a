import { runGroup } from './runGroup.js';
import { GROUPS } from './table.js';

runGroup('work', GROUPS.work);
